// amgsolve: solve a sparse SPD system with smoothed-aggregation AMG-preconditioned CG.
//   amgsolve CONFIG.yaml [--set key.path=value ...] [--report FILE.json] [--vtk FILE.vti] [--threads N] [--quiet]
//            [--compare-spgemm]
//   amgsolve --list-backends
//   amgsolve --config-reference     (prints docs/CONFIG.md)
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <vector>

#include "app/ranks.hpp"
#include "app/run.hpp"
#include "app/version.hpp"
#include "common/atomic_file.hpp"
#include "common/cli_checks.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "config/schema.hpp"

namespace {

// How long a rank whose error reached main waits for the others to meet theirs: an error met alike (after the
// same global reduction) brings every rank there within milliseconds; ten seconds spare an oversubscribed run.
constexpr std::chrono::seconds kErrorAgreementWait{10};

// The one line for an exception that ended the run on this rank (Ranks::where() names the rank over MPI).
void print_error_line(const std::exception_ptr& error) {
  const std::string rank = amgsolve::Ranks::where();
  const char* where = rank.c_str();
  try {
    if (error) std::rethrow_exception(error);
    std::fprintf(stderr, "amgsolve: internal error%s: terminated\n", where);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "amgsolve: error: out of memory%s (try a smaller problem or fewer levels)\n", where);
  } catch (const amgsolve::Error& e) {
    std::fprintf(stderr, "amgsolve: error%s: %s\n", where, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "amgsolve: internal error%s: %s\n", where, e.what());
  } catch (...) {
    std::fprintf(stderr, "amgsolve: internal error%s: an unknown exception\n", where);
  }
}

// An exception thrown inside an OpenMP parallel region (a thread's allocation failing where the memory
// pre-check's estimate was low) cannot reach main's handlers: the runtime calls std::terminate. It is said
// in main's one line (by the rank it happened on; mpirun ends the others), instead of abort()'s "terminate
// called after ..." and a core dump, and the unfinished outputs' temporary files are removed.
[[noreturn]] void on_terminate() {
  static std::atomic<bool> ending{false};
  if (ending.exchange(true)) std::_Exit(amgsolve::kExitError);  // another thread says it already
  amgsolve::remove_pending_temporary_files();
  print_error_line(std::current_exception());
  std::fflush(nullptr);
  if (amgsolve::Ranks::size() > 1) amgsolve::Ranks::abort_all(amgsolve::kExitError);
  std::_Exit(amgsolve::kExitError);  // not exit(): other threads still run, and destructors would race them
}

// CLI11's message, where it reads ill: its list of unexpected arguments comes out in reverse order (CLI11
// 2.3's rjoin), and an option given twice says "At Most 1 required but received 2".
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::string extras;
    for (const std::string& argument : app.remaining()) extras += (extras.empty() ? "" : " ") + argument;
    return "not expected: " + amgsolve::printable(extras, 200);
  }
  const std::string text = e.what();
  const std::string repeated = ": At Most 1 required but received ";
  if (const auto at = text.find(repeated); at != std::string::npos)
    return text.substr(0, at) + " is given " + text.substr(at + repeated.size()) + " times: give it once";
  return text;
}

// What the command line asks for: a run, or one of the two listings.
struct CommandLine {
  amgsolve::RunOptions options;
  bool list_backends = false;
  bool config_reference = false;
};

// The options and their checks, parsed into `line`.
void add_options(CLI::App& app, CommandLine& line) {
  app.set_version_flag("--version", amgsolve::version_text());
  CLI::Option* config = app.add_option("config", line.options.config, "YAML problem file (see docs/CONFIG.md)");
  CLI::Option* set =
      app.add_option("--set", line.options.overrides,
                     "Override a config key, e.g. --set problem.size=[64,64,64]; repeat --set for more keys")
      ->type_name("KEY=VALUE")
      ->expected(1)  // one KEY=VALUE per --set: `--set k=v config.yaml` keeps its config
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  // An output path that starts with '-' is an option the user forgot the path of (`--report --quiet`), which
  // CLI11 would take as the path.
  const CLI::Validator not_an_option(
      [](const std::string& path) {
        return path.starts_with('-') ? "'" + amgsolve::printable(path) + "' is an option, not a file name (a file named "
                                           "so: ./" + amgsolve::printable(path) + ")"
                                     : std::string();
      },
      "");
  CLI::Option* report = app.add_option("--report", line.options.report,
                                       "Write the JSON report here (overrides output.report; '' writes none)")
                            ->type_name("FILE")
                            ->check(not_an_option);
  CLI::Option* vtk =
      app.add_option("--vtk", line.options.vtk,
                     "Write the solution as VTK image data (.vti) here (overrides output.vtk; '' writes none)")
          ->type_name("FILE")
          ->check(not_an_option);
  app.add_option("--threads", line.options.threads, "OpenMP threads (default: OMP_NUM_THREADS or all cores)")
      ->check(amgsolve::whole_number_in(1, amgsolve::kMaxThreads));
  app.add_flag("--quiet", line.options.quiet, "Only errors; no level table or iteration lines");
  CLI::Option* compare = app.add_flag("--compare-spgemm", line.options.compare_spgemm,
               "Run every SpGEMM backend on every setup product, check and time them (table, report, CSV)");
  // The two listings run nothing: given with what a run takes, or together, they refuse rather than ignore it.
  const std::vector<CLI::Option*> run_options = {config, set, report, vtk, compare};
  CLI::Option* list =
      app.add_flag("--list-backends", line.list_backends, "List the SpGEMM backends and whether they can run here");
  CLI::Option* reference =
      app.add_flag("--config-reference", line.config_reference, "Print the configuration reference (Markdown)");
  for (CLI::Option* run_option : run_options) {
    list->excludes(run_option);
    reference->excludes(run_option);
  }
  list->excludes(reference);
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  // A write past the file-size limit (ulimit -f) then fails with EFBIG, which the output's writer says in
  // one line, instead of ending the run silently with a core dump; before MPI starts, whose shared-memory
  // files would meet the limit first.
  std::signal(SIGXFSZ, SIG_IGN);
  const amgsolve::Ranks ranks(argc, argv);  // MPI, when launched by mpirun
  amgsolve::keep_freed_memory();  // the setup's temporaries reuse each other's pages (common/memory.hpp)
  amgsolve::fit_arenas_to_address_limit();  // under ulimit -v, the threads' arenas leave room for the problem
  CommandLine line;
  CLI::App app{"amgsolve: smoothed-aggregation AMG + PCG for sparse SPD systems"};
  add_options(app, line);
  const amgsolve::RunOptions& options = line.options;
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help or --version: under mpirun rank 0 alone answers (every rank would, interleaved), and a standard
    // output it could not write is said.
    return amgsolve::Ranks::prints() ? amgsolve::with_standard_output_written(app.exit(e), "amgsolve") : amgsolve::kExitOk;
  } catch (const CLI::ParseError& e) {  // one line, as every other error (CLI11 prints two)
    // Where the arguments did not parse as one config and options (a stray word, an option's value missing),
    // how they go; an option's wrong value is its own message.
    const bool arguments = dynamic_cast<const CLI::ExtrasError*>(&e) || dynamic_cast<const CLI::ArgumentMismatch*>(&e);
    if (amgsolve::Ranks::prints())
      std::fprintf(stderr, "amgsolve: error: %s (%ssee --help)\n", parse_error_text(app, e).c_str(),
                   arguments ? "the arguments are one config file and options; one KEY=VALUE per --set; " : "");
    return amgsolve::kExitError;
  }

  try {
    if (line.list_backends) {
      if (amgsolve::Ranks::prints()) amgsolve::print_backends();
      return amgsolve::with_standard_output_written(amgsolve::kExitOk, "amgsolve");
    }
    if (line.config_reference) {
      if (amgsolve::Ranks::prints()) std::fputs(amgsolve::config_reference_markdown().c_str(), stdout);
      return amgsolve::with_standard_output_written(amgsolve::kExitOk, "amgsolve");
    }
    if (options.config.empty()) {
      if (amgsolve::Ranks::prints())
        std::fprintf(stderr, "amgsolve: error: no config file given (try: amgsolve configs/poisson.yaml, or --help)\n");
      return amgsolve::kExitError;
    }
    return amgsolve::with_standard_output_written(amgsolve::run(options), "amgsolve");
  } catch (const amgsolve::Error& e) {
    // Input errors are agreed on by every rank (collectively), and the setup and the solve fail alike on
    // every rank: rank 0 says it once. An error the other ranks did not meet leaves them waiting in the
    // computation: this rank names itself and ends them all.
    if (!amgsolve::Ranks::every_rank_arrives_within(kErrorAgreementWait)) {
      std::fprintf(stderr, "amgsolve: error%s: %s\n", amgsolve::Ranks::where().c_str(), e.what());
      amgsolve::Ranks::abort_all(amgsolve::kExitError);
    }
    if (amgsolve::Ranks::prints()) std::fprintf(stderr, "amgsolve: error: %s\n", e.what());
  } catch (...) {  // out of memory, or an internal error
    print_error_line(std::current_exception());
    amgsolve::Ranks::abort_all(amgsolve::kExitError);  // the other ranks may be waiting for this one
  }
  return amgsolve::kExitError;
}

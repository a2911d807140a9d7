#include "app/problem_input.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "amg/near_nullspace.hpp"
#include "amg/nullspace.hpp"
#include "amg/system_nullspace.hpp"
#include "amgsolve/solver.hpp"
#include "app/ranks.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "config/solver_parameters.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"

namespace amgsolve {
namespace {

// rows, nnz and the row-length histogram of the system matrix into the record.
void describe_matrix(const CsrMatrix<double>& A, RunRecord& record) {
  record.rows = A.rows;
  record.nnz = A.nnz();
  record.row_length_histogram.clear();
  for (Index i = 0; i < A.rows; ++i) {
    const auto length = static_cast<std::size_t>(A.row_length(i));
    if (length >= record.row_length_histogram.size()) record.row_length_histogram.resize(length + 1, 0);
    ++record.row_length_histogram[length];
  }
}

// The same for a matrix whose rows the ranks hold (this rank's `rows` of global_rows): the counts summed
// over the ranks (collective).
void describe_distributed_matrix(const CsrMatrix<double>& rows, std::int64_t global_rows, RunRecord& record) {
  describe_matrix(rows, record);
  record.rows = static_cast<Index>(global_rows);
  record.nnz = Ranks::sum(record.nnz);
  // Every rank's histogram as long as the longest, then summed entry by entry.
  const auto length = static_cast<std::size_t>(Ranks::max(static_cast<std::int64_t>(record.row_length_histogram.size())));
  record.row_length_histogram.resize(length, 0);
  for (Offset& count : record.row_length_histogram) count = Ranks::sum(count);
}

}  // namespace

void record_problem(std::string type, std::string description, double seconds, const CsrMatrix<double>& A,
                    std::optional<std::int64_t> global_rows, RunRecord& record) {
  record.problem_type = std::move(type);
  record.problem_description = std::move(description);
  record.problem_seconds = seconds;
  record.assembled_by_rows = global_rows.has_value();
  if (global_rows)
    describe_distributed_matrix(A, *global_rows, record);
  else
    describe_matrix(A, record);
}

bool solve_distributed(const Config& config) { return Ranks::size() > 1 && solver_parameters(config).distribute; }

bool rows_made_apart(const Config& config) {
  const ProblemType type = config.problem.type;
  return solve_distributed(config) &&
         (type == ProblemType::poisson || type == ProblemType::elasticity || type == ProblemType::matrix_market);
}

std::int64_t matrix_file_rows(const MatrixMarketParams& p) {
  if (p.matrix.empty()) throw InputError("problem.matrix: a matrix_market problem needs a matrix file");
  return read_matrix_market_header(p.matrix).rows;
}

RowRange generated_rows(const ProblemSpec& spec) {
  const auto [first, last] = spec.type == ProblemType::elasticity
                                 ? owned_rows(elasticity_rows(spec.elasticity), spec.elasticity.dimensions())
                                 : owned_rows(poisson_rows(spec.poisson));
  return {first, last};
}

namespace {

// A Matrix Market problem by rows: rank 0 reads the file and deals out its entries (read_matrix_market_rows)
// and then the right-hand sides' and initial guesses' rows; every rank keeps its rows of each. Collective.
LinearProblem matrix_market_by_rows(const MatrixMarketParams& p, int block_size) {
  // The right-hand sides' shape against the matrix's from their headers (on rank 0, which reads the files),
  // and the room for them on every rank (rank 0 whole, the others their rows), before the matrix is read.
  std::int64_t rows = 0, columns = 0;
  collectively([&] {
    if (!Ranks::prints()) return;
    rows = matrix_file_rows(p);
    columns = matrix_market_rhs_columns(p, rows);
  });
  rows = Ranks::sum(rows);
  columns = Ranks::sum(columns);
  const auto [first, last] = owned_rows(rows, block_size);
  const std::int64_t held = Ranks::prints() ? rows : last - first;
  collectively([&] {
    require_memory(right_hand_side_bytes(p, held, columns, Ranks::prints()),
                   p.rhs.empty() ? std::string("the right-hand side and the solution")
                                 : "the right-hand sides in " + p.rhs + " and their solutions");
  });
  MatrixRows matrix = read_matrix_market_rows(p.matrix, block_size);
  drop_stored_zeros(matrix.rows, static_cast<Index>(matrix.first_row()));
  require_spd_candidate_rows(p.matrix, matrix);
  LinearProblem problem;
  problem.description = matrix_market_description(p, matrix.global_rows);
  // Read on rank 0 and the others' rows allocated here, where running out is every rank's one-line error,
  // then dealt out from rank 0.
  collectively([&] {
    if (Ranks::prints())
      read_right_hand_sides(p, rows, columns, problem);
    else
      allocate_right_hand_sides(p, held, columns, problem);
  });
  scatter_from_first(problem.b);
  scatter_from_first(problem.more_b);
  scatter_from_first(problem.x0);
  problem.global_rows = matrix.global_rows;
  problem.first_row = matrix.first_row();
  problem.A = std::make_shared<const CsrMatrix<double>>(std::move(matrix.rows));
  return problem;
}

// The right-hand side as the messages name it: its file, or b = 1.
std::string rhs_name(const Config& config, std::size_t column = 0, std::size_t columns = 1) {
  const bool rhs_file = config.problem.type == ProblemType::matrix_market && !config.problem.matrix_market.rhs.empty();
  if (!rhs_file) return "the right-hand side (b = 1)";
  const std::string name = "the right-hand side " + config.problem.matrix_market.rhs;
  return columns > 1 ? name + ", column " + std::to_string(column + 1) + "," : name;
}

// check(b, name) for every right-hand side.
template <class Check>
void for_each_rhs(const Config& config, const LinearProblem& problem, Check&& check) {
  const std::vector<const Vector<double>*> all = in_column_order(problem.b, problem.more_b);
  for (std::size_t c = 0; c < all.size(); ++c) check(*all[c], rhs_name(config, c, all.size()));
}

double norm_of(const Vector<double>& b, bool by_rows = false) {
  return std::sqrt(sum_of(b, [&](std::int64_t i) { return b[i] * b[i]; }, by_rows));
}

// A singular system (amg/system_nullspace.hpp) needs a right-hand side without a part along its nullspace
// (loads in equilibrium): checked before the setup, as the constant's below. Vectors that do not fit the
// matrix are left to the reading of their file (app/near_nullspace_input.cpp), which names it.
void require_solvable_system(const Config& config, const LinearProblem& problem) {
  const AmgParams& given = config.amg;
  if (!near_nullspace_problem(problem.A->rows, given.block_size, given.near_nullspace).empty()) return;
  AmgParams amg = given;
  resolve_system_nullspace(*problem.A, amg);
  if (amg.nullspace != NullspaceChoice::near_nullspace) return;
  const NullspaceProjection nullspace(finest_near_nullspace(problem.A->rows, amg.block_size, amg.near_nullspace),
                                      *amg.nullspace_combinations);
  for_each_rhs(config, problem, [&](const Vector<double>& b, const std::string& name) {
    require_consistent_rhs(nullspace.part(b), nullspace.vectors(), held_tolerance(config.solver, norm_of(b)), name);
  });
}

// A singular scalar matrix's right-hand sides must each sum to zero: whole, or (by_rows) summed over the
// ranks' rows (collective), exactly either way.
void require_constant_free_rhs(const Config& config, const LinearProblem& problem, bool by_rows) {
  const std::int64_t n = problem.global_rows ? *problem.global_rows : problem.A->rows;
  for_each_rhs(config, problem, [&](const Vector<double>& b, const std::string& name) {
    const double sum = sum_of(b, [&](std::int64_t i) { return b[i]; }, by_rows), norm = norm_of(b, by_rows);
    require_consistent_rhs(sum, norm, static_cast<std::size_t>(n), held_tolerance(config.solver, norm), name);
  });
}

// A singular matrix (amg.nullspace) needs a connected graph and a right-hand side that sums to zero: checked
// here, before the setup (the Solver checks both again, for its library users).
void require_solvable(const Config& config, const LinearProblem& problem) {
  if (config.amg.is_system()) return require_solvable_system(config, problem);
  if (resolve_nullspace(*problem.A, config.amg.nullspace) != NullspaceChoice::constant) return;
  require_constant_free_rhs(config, problem, false);
}

// The same where the ranks hold the rows of A and of the right-hand sides: the rows' sums and b's sum and
// norm judged over the ranks, so that an inconsistent b is refused before the setup, not after it in the
// solve (the Solver counts the graph's parts over the ranks). Collective.
void require_solvable_by_rows(const Config& config, const LinearProblem& problem) {
  // (A system's nullspace the Solver decides, refusing a singular one over ranks.)
  if (config.amg.nullspace == NullspaceChoice::none || config.amg.is_system()) return;
  const bool zero_sums = !some_row_sum_beyond(*problem.A, zero_row_sum_tolerance<double>());
  if (Ranks::sum(zero_sums ? 0 : 1) == 0) require_constant_free_rhs(config, problem, true);
}

}  // namespace

std::vector<const Vector<double>*> in_column_order(const Vector<double>& first, const std::vector<Vector<double>>& rest) {
  std::vector<const Vector<double>*> all = {&first};
  for (const Vector<double>& v : rest) all.push_back(&v);
  return all;
}

LinearProblem assemble_step(const Config& config, const ProblemSpec& spec, bool by_rows) {
  if (by_rows && spec.type == ProblemType::matrix_market) {
    LinearProblem problem = matrix_market_by_rows(spec.matrix_market, config.amg.block_size);  // read on rank 0, dealt out
    require_solvable_by_rows(config, problem);
    return problem;
  }
  std::optional<LinearProblem> assembled;
  collectively([&] {
    if (by_rows) {
      const RowRange rows = generated_rows(spec);
      assembled = make_problem(spec, &rows);  // the Solver decides the nullspace over the ranks
    } else {
      assembled = make_problem(spec);
      require_solvable(config, *assembled);
    }
  });
  if (by_rows) require_solvable_by_rows(config, *assembled);
  return std::move(*assembled);
}

void describe_problem(const Config& config, const LinearProblem& problem, bool by_rows, double seconds,
                      RunRecord& record) {
  record_problem(name_of(config.problem.type), problem.description, seconds, *problem.A,
                 by_rows ? problem.global_rows : std::nullopt, record);
  // A Matrix Market file is read (on rank 0, each rank dealt its rows); the other problems are assembled.
  const bool read = config.problem.type == ProblemType::matrix_market;
  progress("problem: %s\n         %s, %s, %s in %.3f s%s\n", problem.description.c_str(),
           counted(record.rows, "row").c_str(), counted(record.nnz, "nonzero").c_str(), read ? "read" : "assembled",
           record.problem_seconds, !by_rows ? "" : read ? " (on rank 0, each rank dealt its rows)" : " (each rank its rows)");
  if (!problem.more_b.empty())
    progress("         %zu right-hand sides (load cases, the columns of %s), solved one after another\n",
             problem.more_b.size() + 1, config.problem.matrix_market.rhs.c_str());
}

}  // namespace amgsolve

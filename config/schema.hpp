#pragma once
// The one declaration of every configuration key: its path, type, bounds, documentation, and the field of
// the typed Config it sets. The default is that field's value in a default-constructed Config, i.e. the
// parameter structs' own defaults (amg/params.hpp, solver/solve_result.hpp, problems/...), where the reason
// for each value is written. Validation and reading (config.cpp), the defaults a run uses and
// docs/CONFIG.md (`amgsolve --config-reference`) all follow from this table.
//
// Adding a key: one entry in config/schema.cpp (integer, number, text, path, flag, choice or a list, bound to
// the field it sets), then regenerate docs/CONFIG.md. Rules between keys go into check_config().
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace amgsolve {

struct Config;

enum class KeyKind { integer, number, text, choice, integer_list, number_list, pair_list, path };

// Typed, validated access to the values of one configuration document (config.cpp implements it over
// yaml-cpp). Every getter throws InputError naming the file and line (or the --set argument) and the key.
class KeyReader {
 public:
  virtual ~KeyReader() = default;
  virtual bool is_set(const std::string& path) const = 0;  // given a value (`key:` alone is not)
  virtual bool is_overridden(const std::string& path) const = 0;  // given by --set (a library parameter), not the file
  virtual std::int64_t integer(const std::string& path) const = 0;
  virtual double number(const std::string& path) const = 0;
  virtual std::string text(const std::string& path) const = 0;  // also checks a choice key's value
  // A path the run reads, resolved from the config file's folder when the file gives it relatively.
  virtual std::string input_path(const std::string& path) const = 0;
  virtual std::vector<std::int64_t> integer_list(const std::string& path) const = 0;
  virtual std::vector<double> number_list(const std::string& path) const = 0;
  virtual std::vector<std::array<double, 2>> pair_list(const std::string& path) const = 0;
  [[noreturn]] virtual void fail_at(const std::string& path, const std::string& message) const = 0;
};

struct KeySpec {
  std::string path;           // "amg.smoother.degree"
  KeyKind kind = KeyKind::text;
  std::string default_yaml;   // the default as YAML text, read off a default-constructed Config
  std::string doc;            // one or two sentences
  std::vector<std::string> choices;  // for KeyKind::choice
  std::optional<double> min;  // bounds for numbers and list entries
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;
  std::string bounds_reason;  // why the bounds are what they are, when that is not obvious (for messages)
  std::size_t list_min = 0, list_max = 0;  // entry count for lists
  std::string problem_type;   // non-empty: the key exists only for this problem.type
  std::string replaced_by;    // non-empty: a retired key, an error that names its replacement
  bool input = false;         // a file the run reads (load_config checks that it can be read)
  // Sets the Config field from the document; called only for keys the document sets.
  std::function<void(const KeyReader&, Config&)> read;
};

const std::vector<KeySpec>& config_schema();

// The rules between keys, checked once every key is read: a Poisson size with as many entries as the
// stencil has dimensions, a matrix for matrix_market problems, the backend resolved (resolve_backend) and
// amg.spgemm one of its SpGEMM backends, output.spgemm_csv only with the comparison.
// problem_given: false for a Solver's settings (Python), whose matrix and near-nullspace vectors come apart
// from them, so that a check needing the problem is left to the library.
void check_config(const KeyReader& reader, Config& config, bool problem_given = true);

// Top-level and nested section names ("problem", "amg", "amg.smoother", ...).
bool is_config_section(const std::string& path);

// docs/CONFIG.md: every key with its type, default and meaning.
std::string config_reference_markdown();

}  // namespace amgsolve

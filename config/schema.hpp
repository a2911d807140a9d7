#pragma once
// The one declaration of every configuration key: its type, default, allowed values and meaning.
// Validation (config.cpp), the defaults the program runs with, and docs/CONFIG.md
// (`amgsolve --config-reference`) are all generated from this table.
#include <optional>
#include <string>
#include <vector>

namespace amgsolve {

enum class KeyKind { integer, number, text, choice, integer_list, number_list, pair_list, path };

struct KeySpec {
  std::string path;           // "amg.smoother.degree"
  KeyKind kind;
  std::string default_yaml;   // the default as YAML text ("" = no default / not set)
  std::string doc;            // one or two sentences
  std::vector<std::string> choices;  // for KeyKind::choice
  std::optional<double> min;  // inclusive bounds for numbers and list entries
  std::optional<double> max;
  bool min_exclusive = false;
  std::size_t list_min = 0, list_max = 0;  // entry count for integer lists
  std::string problem_type;   // non-empty: the key exists only for this problem.type
};

const std::vector<KeySpec>& config_schema();

// Top-level and nested section names ("problem", "amg", "amg.smoother", ...).
bool is_config_section(const std::string& path);

// docs/CONFIG.md: every key with its type, default and meaning.
std::string config_reference_markdown();

}  // namespace amgsolve

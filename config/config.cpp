#include "config/config.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "amgsolve/parameter_ranges.hpp"
#include "common/error.hpp"
#include "config/schema.hpp"
#include "sparse/matrix_market.hpp"

namespace amgsolve {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  std::string part;
  while (std::getline(in, part, '.')) parts.push_back(part);
  return parts;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Whether key k exists for this problem.type (the problem keys exist for their type only).
bool applies_to(const KeySpec& k, const std::string& problem_type) {
  return k.problem_type.empty() || k.problem_type == problem_type;
}

const KeySpec* find_spec(const std::string& path, const std::string& problem_type) {
  const KeySpec* any = nullptr;
  for (const KeySpec& k : config_schema()) {
    if (k.path != path) continue;
    if (applies_to(k, problem_type)) return &k;
    any = &k;
  }
  return any;
}

// Other solvers' names for keys, which no edit distance finds (docs/MIGRATING.md maps them): scipy's cg,
// PyAMG, AMGCL, hypre's BoomerAMG, PETSc's GAMG and AmgX, as their users would write them in a section or,
// in Python, without one.
constexpr std::pair<std::string_view, std::string_view> kOtherSolversNames[] = {
    // scipy, PyAMG
    {"solver.tol", "solver.tolerance"},        {"solver.rtol", "solver.tolerance"},
    {"solver.atol", "solver.absolute_tolerance"}, {"solver.maxiter", "solver.max_iterations"},
    {"amg.max_coarse", "amg.coarse_size"},     {"amg.strength", "amg.strength_threshold"},
    {"amg.theta", "amg.strength_threshold"},   {"amg.presmoother", "amg.smoother.type"},
    {"amg.postsmoother", "amg.smoother.type"}, {"amg.smooth", "amg.prolongator_damping"},
    {"amg.improve_candidates", "amg.improve_near_nullspace"},
    {"amg.smoother.iterations", "amg.smoother.sweeps"},
    // AMGCL
    {"amg.coarse_enough", "amg.coarse_size"},  {"amg.eps_strong", "amg.strength_threshold"},
    {"amg.relax", "amg.smoother.type"},        {"amg.npre", "amg.smoother.pre_steps"},
    {"amg.npost", "amg.smoother.post_steps"},  {"amg.smoother.damping", "amg.smoother.omega"},
    {"amg.smoother.power", "amg.smoother.degree"},
    // hypre
    {"solver.max_iter", "solver.max_iterations"}, {"amg.max_coarse_size", "amg.coarse_size"},
    {"amg.strong_threshold", "amg.strength_threshold"}, {"amg.relax_type", "amg.smoother.type"},
    {"amg.cheby_order", "amg.smoother.degree"},
    // PETSc
    {"solver.maxit", "solver.max_iterations"}, {"solver.max_it", "solver.max_iterations"},
    {"amg.threshold", "amg.strength_threshold"}, {"amg.coarse_eq_limit", "amg.coarse_size"},
    // AmgX
    {"solver.max_iters", "solver.max_iterations"}, {"amg.presweeps", "amg.smoother.pre_steps"},
    {"amg.postsweeps", "amg.smoother.post_steps"}, {"amg.chebyshev_polynomial_order", "amg.smoother.degree"},
};

// Ours for another solver's name of a key, or "".
std::string our_name_for(const std::string& path) {
  for (const auto& [theirs, ours] : kOtherSolversNames)
    if (path == theirs) return std::string(ours);
  return "";
}

// For a key or section given without its section ("coarse_size", "tol", "smoother.type", "smoother"): the
// amg or solver key or section it names, or "".
std::string key_in_a_section(const std::string& key) {
  for (const char* section : {"amg.", "solver."}) {
    const std::string path = section + key;
    if (find_spec(path, "") || is_config_section(path)) return path;  // every problem type's
    if (std::string ours = our_name_for(path); !ours.empty()) return ours;
  }
  return "";
}

// " (did you mean 'X'?)" where `path` is another solver's name for our key X, or X without its section
// (a top-level `tol:`, Python's Solver(A, coarse_size=10) or Solver(A, smoother={"type": "jacobi"})); else "".
std::string named_elsewhere(const std::string& path) {
  std::string named = our_name_for(path);
  if (named.empty() && !is_config_section(path.substr(0, path.find('.')))) named = key_in_a_section(path);
  return named.empty() ? "" : " (did you mean '" + named + "'?)";
}

// " (did you mean 'S.type'?)" for a section S given a value where it has a `type` (`smoother: jacobi`, in
// Python amg={"smoother": "jacobi"}); else "".
std::string section_given_a_value(const std::string& section) {
  const std::string type = section + ".type";
  return find_spec(type, "") ? " (did you mean '" + type + "'?)" : "";
}

std::string suggestion_for(const std::string& path) {
  if (std::string named = named_elsewhere(path); !named.empty()) return named;
  // Candidates: every key and every section above a key ("problem.tissues.liver").
  std::set<std::string> candidates;
  for (const KeySpec& k : config_schema())
    for (std::size_t dot = k.path.find('.'); dot != std::string::npos; dot = k.path.find('.', dot + 1)) {
      candidates.insert(k.path.substr(0, dot));
      candidates.insert(k.path);
    }
  std::string best;
  std::size_t best_distance = 4;  // suggest only close matches
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(path, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// Where each document of a YAML text starts (the event parser's view, no tree built).
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The first YAML document of `text`; an error for a second one. Not YAML::LoadAll: in yaml-cpp 0.7 (Debian
// 12's) it loops forever, allocating, on some malformed input such as a lone ',' (jbeder/yaml-cpp#1040,
// fixed in 0.8 by #1319; found by fuzz/config.cpp): its parser keeps reporting empty documents without
// consuming anything. Here at most two documents are asked for, and a second that starts where the first
// did is that malformed input.
YAML::Node load_single_document(const std::string& text, const std::string& name) {
  const auto malformed = [&](const YAML::Mark& mark, const std::string& message) {
    return InputError(name + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
                      ": malformed YAML: " + message);
  };
  YAML::Node root;
  DocumentStarts documents;
  try {
    root = YAML::Load(text);
    std::istringstream in(text);
    YAML::Parser parser(in);
    for (int d = 0; d < 2 && parser.HandleNextDocument(documents); ++d) {
    }
  } catch (const YAML::Exception& e) {
    throw malformed(e.mark, e.msg);
  }
  if (documents.starts.size() < 2) return root;
  const YAML::Mark& second = documents.starts[1];
  if (second.pos <= documents.starts[0].pos) throw malformed(second, "text the parser cannot read");
  throw InputError(name + ":" + std::to_string(second.line + 1) +
                   ": a second YAML document: a config file holds one (remove the '---' and what follows, or merge "
                   "it into the first)");
}

// At most this many values in a config, its aliases expanded: yaml-cpp shares an aliased node, but every walk
// over the tree (the key and tag checks) visits it once per alias, so nested aliases (a "billion laughs" of a
// few hundred bytes) would take hours. Real configs hold hundreds; bulk data goes in files.
constexpr std::size_t kMaxConfigValues = 1000000;
// A config file's size limit: configs are a few KiB (arrays of spots or detectors included).
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// Refuses a tree of more than kMaxConfigValues nodes, counting at most that many (an explicit stack: no
// recursion however deep the nesting).
void require_bounded_tree(const YAML::Node& root, const std::string& where) {
  std::vector<YAML::Node> pending = {root};
  std::size_t visited = 0;
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (++visited > kMaxConfigValues)
      throw InputError(where + "more than " + std::to_string(kMaxConfigValues) +
                       " values with its YAML aliases expanded: a config holds settings (put bulk data in a file)");
    if (node.IsSequence())
      for (const YAML::Node& entry : node) pending.push_back(entry);
    else if (node.IsMap())
      for (auto it = node.begin(); it != node.end(); ++it) {
        pending.push_back(it->first);
        pending.push_back(it->second);
      }
  }
}

// Whether a config holds no value at all: nothing, or only sections without entries (`problem:` alone, which
// is also what a file cut after its first line looks like).
bool holds_no_values(const YAML::Node& root) {
  if (root.IsNull()) return true;
  if (!root.IsMap()) return false;
  for (const auto& section : root)
    if (!section.second.IsNull() && !(section.second.IsMap() && section.second.size() == 0)) return false;
  return true;
}

// The YAML tree of one run plus where each value came from, for error messages.
class Document {
 public:
  Document(const std::string& text, std::string name) : name_(std::move(name)) {
    if (const auto nul = text.find('\0'); nul != std::string::npos)
      throw InputError(name_ + ":" + std::to_string(1 + std::count(text.begin(), text.begin() + nul, '\n')) +
                       ": the file contains NUL bytes: it is not a YAML text file");
    root_ = load_single_document(text, name_);
    require_bounded_tree(root_, name_ + ": ");
    empty_text_ = holds_no_values(root_);
    if (root_.IsNull()) root_ = YAML::Node(YAML::NodeType::Map);
    if (!root_.IsMap()) throw InputError(name_ + ":1: the configuration must be a YAML map of sections");
  }

  // What names an overriding assignment in messages: "--set" on the command line, "parameter" in the library.
  void set_override_label(std::string label) { override_label_ = std::move(label); }

  void apply_override(const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(override_label_ + " " + printable(assignment) + ": expected key.path=value");
    const std::string path = assignment.substr(0, eq);
    YAML::Node value;
    try {
      value = YAML::Load(assignment.substr(eq + 1));
      require_one_value(assignment.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw InputError(override_label_ + " " + printable(assignment) + ": malformed YAML value: " + e.msg);
    } catch (const InputError& e) {
      throw InputError(override_label_ + " " + printable(assignment) + ": " + e.what());
    }
    require_bounded_tree(value, override_label_ + " " + printable(assignment) + ": ");
    const std::vector<std::string> parts = split_path(path);
    if (path.back() == '.' || std::find(parts.begin(), parts.end(), std::string()) != parts.end())
      throw InputError(override_label_ + " " + printable(assignment) + ": '" + printable(path) + "' has an empty key name");
    assign(parts, value, assignment);
  }

  // A map given to a section (--set 'problem={size: [6,6,6]}') sets the keys it names and keeps the section's
  // others, as the same keys given one by one would: replacing the section whole would drop the file's
  // problem.type and the rest without a word.
  void assign(std::vector<std::string> parts, const YAML::Node& value, const std::string& assignment) {
    std::string path;
    for (const std::string& part : parts) path += (path.empty() ? "" : ".") + part;
    if (!value.IsMap() || !is_config_section(path)) {
      set_path(root_, parts, 0, value, path, override_label_);
      overridden_.insert(path);
      return;
    }
    if (value.size() == 0)
      throw InputError(override_label_ + " " + printable(assignment) + ": sets no key of " + printable(path) +
                       " (give its keys: " + printable(path) + ".KEY=VALUE, or {KEY: VALUE, ...})");
    std::set<std::string> given;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!it->first.IsScalar())
        throw InputError(override_label_ + " " + printable(assignment) + ": keys must be plain names");
      const std::string key = it->first.as<std::string>();
      if (!given.insert(key).second)
        throw InputError(override_label_ + " " + printable(assignment) + ": '" + printable(path + "." + key) +
                         "' is given twice: give it once");
      parts.push_back(key);
      assign(parts, it->second, assignment);
      parts.pop_back();
    }
  }

  // yaml-cpp reads the first value of "[8,8,8] junk", "[8,8,8],[4,4,4]" or a second document and drops the
  // rest: a --set value must be one value. Inside a list of its own, a flow value with more after it is a
  // parse error or a second entry.
  static void require_one_value(const std::string& text) {
    if (text.find("\n---") != std::string::npos || text.find("\n...") != std::string::npos || text.rfind("---", 0) == 0)
      throw InputError("one value only, not several YAML documents");
    const std::size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos || (text[first] != '[' && text[first] != '{')) return;
    if (YAML::Load("[" + text + "\n]").size() != 1) throw InputError("one value only, not a list of them");
  }

  // "file:line: " for a value, or "--set key: " for an overridden one.
  std::string where(const std::string& path, const YAML::Node& node) const {
    for (const std::string& o : overridden_)
      if (path == o || path.rfind(o + ".", 0) == 0) return override_label_ + " " + printable(o) + ": ";
    // A section only --set made (it has no place in the file): the assignment that made it.
    if (node.Mark().is_null())
      for (const std::string& o : overridden_)
        if (o.rfind(path + ".", 0) == 0) return override_label_ + " " + printable(o) + ": ";
    return where_node(node);
  }
  // "file:line: " of a node of the file.
  std::string where_node(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null() || mark.line < 0) return name_ + ": ";
    return name_ + ":" + std::to_string(mark.line + 1) + ": ";
  }

  const std::string& override_label() const { return override_label_; }

  // Whether --set gave the key (or a section above it).
  bool overridden(const std::string& path) const {
    for (const std::string& o : overridden_)
      if (path == o || path.rfind(o + ".", 0) == 0) return true;
    return false;
  }

  // The folder relative input paths of the file are resolved from (empty: the working directory).
  void set_base_folder(std::string folder) { base_folder_ = std::move(folder); }
  const std::string& base_folder() const { return base_folder_; }

  // Value at a dotted path, or an undefined node.
  YAML::Node find(const std::string& path) const {
    return lookup(root_, split_path(path), 0);
  }

  const YAML::Node& root() const { return root_; }
  const std::string& name() const { return name_; }
  // Whether the text held no settings (nothing, or only comments), before any override.
  bool empty_text() const { return empty_text_; }

 private:
  static YAML::Node lookup(const YAML::Node& node, const std::vector<std::string>& parts, std::size_t i) {
    if (i == parts.size()) return node;
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node child = node[parts[i]];
    if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    return lookup(child, parts, i + 1);
  }

  static void set_path(YAML::Node node, const std::vector<std::string>& parts, std::size_t i, const YAML::Node& value,
                       const std::string& path, const std::string& label) {
    if (i + 1 == parts.size()) {
      node[parts[i]] = value;
      return;
    }
    YAML::Node child = node[parts[i]];
    if (!child.IsDefined() || child.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child = node[parts[i]];
    }
    if (!child.IsMap())
      throw InputError(label + " " + printable(path) + ": '" + printable(parts[i]) + "' is not a section");
    set_path(child, parts, i + 1, value, path, label);
  }

  std::string override_label_ = "--set";
  std::string name_;
  YAML::Node root_;
  bool empty_text_ = false;
  std::set<std::string> overridden_;
  std::string base_folder_;
};

// A retired key's replacement, for its error message: "the key `backend` (cpu, cuda or auto)".
std::string describe_replacement(const std::string& replacement) {
  std::string choices;
  for (const KeySpec& k : config_schema())
    if (k.path == replacement && k.replaced_by.empty())
      for (std::size_t i = 0; i < k.choices.size(); ++i)
        choices += (i == 0 ? "" : i + 1 == k.choices.size() ? " or " : ", ") + k.choices[i];
  const bool top_level = replacement.find('.') == std::string::npos;
  return std::string(top_level ? "the top-level key" : "the key") + " `" + replacement + "`" +
         (choices.empty() ? "" : " (" + choices + ")");
}

// Rejects unknown keys, retired keys, keys given twice or without a value, sections given as scalars, and
// keys of another problem type.
void check_keys(const Document& doc, const YAML::Node& node, const std::string& prefix, const std::string& type) {
  std::map<std::string, YAML::Node> seen;  // this map's keys so far
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      throw InputError(doc.where(prefix, it->first) + "keys must be plain names" +
                       (prefix.empty() ? std::string() : " (in section '" + prefix + "')"));
    const std::string name = it->first.as<std::string>();
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    // "solver.max_iterations": 1 in a file would name a key the schema knows, but the document is read as
    // nested sections, so its value would be ignored: the file nests, as --set's dotted paths do for it.
    if (name.find('.') != std::string::npos)
      throw InputError(doc.where(path, it->first) + "key '" + printable(name) +
                       "' has a dot: write it as nested sections (" + printable(name.substr(0, name.find('.'))) +
                       ": {" + printable(name.substr(name.find('.') + 1)) + ": ...})");
    if (const auto first = seen.find(name); first != seen.end()) {
      // Both are the file's (a --set replaces the first's value, it never adds a key twice), even where
      // --set gave the key too.
      const int line = first->second.Mark().line + 1;
      throw InputError(doc.where_node(it->first) + "'" + path + "' is given twice (first on line " +
                       std::to_string(line) + "): give it once");
    }
    seen.emplace(name, it->first);
    const KeySpec* spec = find_spec(path, type);
    if (spec) {
      if (!spec->replaced_by.empty())
        throw InputError(doc.where(path, it->first) + "key '" + path + "' was replaced by " +
                         describe_replacement(spec->replaced_by));
      if (!applies_to(*spec, type))
        throw InputError(doc.where(path, it->first) + "key '" + path + "' applies only to problem.type " +
                         spec->problem_type + ", not " + type);
      if (it->second.IsNull())
        throw InputError(doc.where(path, it->first) + "key '" + path +
                         "' has no value (give one, or leave the key out for its default)");
      continue;
    }
    if (is_config_section(path)) {
      if (!it->second.IsMap() && !it->second.IsNull())
        throw InputError(doc.where(path, it->first) + "'" + path + "' must be a section (a YAML map)" +
                         section_given_a_value(path));
      if (it->second.IsMap()) check_keys(doc, it->second, path, type);
      continue;
    }
    throw InputError(doc.where(path, it->first) + "unknown key '" + printable(path) + "'" + suggestion_for(path));
  }
}

// An integer written in decimal: yaml-cpp would read 010 as 8 (octal) and 0x10 as 16, which nobody writing
// a grid size means.
// beyond: set for digits that are a decimal integer too large for 64 bits (+1 or -1, its sign), which the
// bounds then refuse by name.
bool decimal_integer(const YAML::Node& node, std::int64_t& v, int& beyond) {
  beyond = 0;
  if (!node.IsScalar()) return false;
  const std::string& s = node.Scalar();
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);  // from_chars takes '-' only
  const char* end = s.data() + s.size();
  const char* first_digit = begin + (begin < end && *begin == '-' ? 1 : 0);
  if (first_digit == end || (*first_digit == '0' && end - first_digit > 1)) return false;
  if (begin != s.data() && first_digit != begin) return false;  // "+-5"
  const auto [stop, error] = std::from_chars(begin, end, v);
  if (error == std::errc::result_out_of_range && stop == end) {
    beyond = *begin == '-' ? -1 : 1;
    return true;
  }
  return error == std::errc() && stop == end;
}

// KeyReader over the YAML document.
class Reader final : public KeyReader {
 public:
  Reader(const Document& doc, std::string problem_type) : doc_(doc), type_(std::move(problem_type)) {}

  std::int64_t integer(const std::string& path) const override {
    const auto [node, spec] = value(path);
    std::int64_t v = 0;
    if (!read_integer(path, node, *spec, v)) fail(path, node, "must be a decimal integer, got " + show(node));
    check_bounds(path, node, *spec, static_cast<double>(v));
    return v;
  }

  double number(const std::string& path) const override {
    const auto [node, spec] = value(path);
    double v = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, v) || !std::isfinite(v))
      fail(path, node, "must be a finite number, got " + show(node));
    check_bounds(path, node, *spec, v);
    return v;
  }

  std::string text(const std::string& path) const override {
    const auto [node, spec] = value(path);
    if (node.IsNull()) return "";
    if (!node.IsScalar()) fail(path, node, "must be a string, got " + show(node));
    const std::string v = node.as<std::string>();
    if (has_control_character(v)) fail(path, node, "must not hold control characters, got " + show(node));
    if (spec->kind == KeyKind::choice && std::find(spec->choices.begin(), spec->choices.end(), v) == spec->choices.end()) {
      std::string allowed;
      for (const auto& c : spec->choices) allowed += (allowed.empty() ? "" : ", ") + c;
      fail(path, node, "'" + printable(v) + "' is not one of: " + allowed);
    }
    return v;
  }

  std::vector<std::int64_t> integer_list(const std::string& path) const override {
    return list<std::int64_t>(path, "integers like [64, 64, 64]");
  }
  std::vector<double> number_list(const std::string& path) const override {
    return list<double>(path, "numbers like [1, 1e-3]");
  }

  // A file path given in the config file is relative to the file's folder; one given with --set, to the
  // working directory (where the command was typed).
  std::string input_path(const std::string& path) const override {
    const std::string value = text(path);
    if (value.empty() || doc_.overridden(path) || doc_.base_folder().empty()) return value;
    const std::filesystem::path given(value);
    if (given.is_absolute()) return value;
    return (std::filesystem::path(doc_.base_folder()) / given).lexically_normal().string();
  }

  bool is_overridden(const std::string& path) const override { return doc_.overridden(path); }

  bool is_set(const std::string& path) const override {
    const YAML::Node node = doc_.find(path);
    return node.IsDefined() && !node.IsNull();
  }

  [[noreturn]] void fail_at(const std::string& path, const std::string& message) const override {
    // These messages begin with their key: after "--set KEY: " it would be said twice.
    if (doc_.overridden(path) && message.rfind(path, 0) == 0) throw InputError(doc_.override_label() + " " + message);
    throw InputError(doc_.where(path, doc_.find(path)) + message);
  }

  std::vector<std::array<double, 2>> pair_list(const std::string& path) const override {
    const auto [node, spec] = value(path);
    if (!node.IsSequence()) fail(path, node, "must be a list of [x, y] pairs, got " + show(node));
    if (node.size() > spec->list_max)
      fail(path, node, "must have at most " + std::to_string(spec->list_max) + " entries, has " +
                           std::to_string(node.size()));
    std::vector<std::array<double, 2>> out;
    for (const YAML::Node& entry : node) {
      std::array<double, 2> xy{};
      const bool ok = entry.IsSequence() && entry.size() == 2 && entry[0].IsScalar() && entry[1].IsScalar() &&
                      YAML::convert<double>::decode(entry[0], xy[0]) && YAML::convert<double>::decode(entry[1], xy[1]);
      if (!ok) fail(path, entry, "entries must be pairs of numbers like [10, -2.5], got " + show(entry));
      if (!std::isfinite(xy[0]) || !std::isfinite(xy[1]))
        fail(path, entry, "entries must be finite coordinates in mm, got [" + format_number(xy[0]) + ", " +
                              format_number(xy[1]) + "]");
      out.push_back(xy);
    }
    return out;
  }

 private:
  template <class T>
  std::vector<T> list(const std::string& path, const std::string& example) const {
    const auto [node, spec] = value(path);
    if (!node.IsSequence()) fail(path, node, "must be a list of " + example + ", got " + show(node));
    if (node.size() < spec->list_min || node.size() > spec->list_max)
      fail(path, node,
           "must have " + std::to_string(spec->list_min) + " to " + std::to_string(spec->list_max) + " entries, has " +
               std::to_string(node.size()));
    std::vector<T> out;
    for (const YAML::Node& entry : node) {
      T v{};
      bool read = false;
      if constexpr (std::is_integral_v<T>) {
        read = read_integer(path, entry, *spec, v);
      } else {
        read = entry.IsScalar() && YAML::convert<T>::decode(entry, v) && std::isfinite(v);
      }
      if (!read)
        fail(path, entry, "entries must be " + example.substr(0, example.find(' ')) + ", got " + show(entry));
      check_bounds(path, entry, *spec, static_cast<double>(v));
      out.push_back(v);
    }
    return out;
  }

  std::pair<YAML::Node, const KeySpec*> value(const std::string& path) const {
    const KeySpec* spec = find_spec(path, type_);
    if (!spec) throw Error("internal: key " + path + " is not in the schema");
    YAML::Node node = doc_.find(path);
    // "key:" with no value counts as not set.
    if (!node.IsDefined() || node.IsNull()) node = YAML::Load(spec->default_yaml.empty() ? "~" : spec->default_yaml);
    if (const std::string tag = unfit_tag(node, spec->kind); !tag.empty())
      fail(path, node, "has the YAML tag '" + printable(tag) + "', which is not its type: write the plain value");
    if (const YAML::Node quoted = quoted_number(node, spec->kind); quoted.IsDefined())
      fail(path, quoted, "is quoted, so a string: write the number without quotes, got " + show(quoted));
    return {node, spec};
  }

  // The first quoted scalar ("10", '1e-6': YAML's strings) where a key of this kind takes numbers, itself or as
  // its entries; undefined where there is none. (A string the reader converted would be taken silently, where
  // `true` or `yes` for a number is refused.)
  static YAML::Node quoted_number(const YAML::Node& node, KeyKind kind) {
    const bool numbers = kind == KeyKind::integer || kind == KeyKind::number || kind == KeyKind::integer_list ||
                         kind == KeyKind::number_list || kind == KeyKind::pair_list;
    if (!numbers) return YAML::Node(YAML::NodeType::Undefined);
    if (node.IsScalar()) return node.Tag() == "!" ? node : YAML::Node(YAML::NodeType::Undefined);
    if (node.IsSequence())
      for (const YAML::Node& entry : node)
        if (YAML::Node inner = quoted_number(entry, kind); inner.IsDefined()) return inner;
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // A tag the value or an entry of it carries that does not name the key's own type (!!str 5 for an integer,
  // a tag of the application's own), "" where none does: the reader takes a value by its key's type, so such a
  // tag would be ignored silently. YAML's core tags of the key's type (!!float 1e-6, !!int 8) are its type.
  static std::string unfit_tag(const YAML::Node& node, KeyKind kind, bool entry = false) {
    const std::string& tag = node.Tag();
    const std::string core = "tag:yaml.org,2002:";  // what yaml-cpp makes of !!
    if (!tag.empty() && tag != "?" && tag != "!") {
      if (tag.rfind(core, 0) != 0) return tag;
      const std::string type = tag.substr(core.size());
      if (!core_type_fits(type, kind, entry)) return "!!" + type;
    }
    if (node.IsSequence() || node.IsMap())
      for (auto it = node.begin(); it != node.end(); ++it)
        if (std::string inner = unfit_tag(node.IsMap() ? it->second : *it, kind, true); !inner.empty()) return inner;
    return "";
  }

  // Whether a core tag's type (str, int, float, bool, seq, map, null) is the type of a key of this kind (of one
  // of its entries, for a list).
  static bool core_type_fits(const std::string& type, KeyKind kind, bool entry) {
    const bool numeric = type == "int" || type == "float";
    switch (kind) {
      case KeyKind::integer: return type == "int";
      case KeyKind::number: return numeric;
      case KeyKind::text:
      case KeyKind::path: return type == "str";
      case KeyKind::choice: return type == "str" || type == "bool";
      case KeyKind::integer_list: return entry ? type == "int" : type == "seq";
      case KeyKind::number_list: return entry ? numeric : type == "seq";
      case KeyKind::pair_list: return type == "seq" || (entry && numeric);
    }
    return false;
  }

  // A decimal integer into v (false: not one); digits beyond 64 bits are refused by the bounds, or as such.
  bool read_integer(const std::string& path, const YAML::Node& node, const KeySpec& spec, std::int64_t& v) const {
    int beyond = 0;
    if (!decimal_integer(node, v, beyond)) return false;
    if (beyond != 0) {
      check_bounds(path, node, spec, beyond * HUGE_VAL);
      fail(path, node, "must be at most 9223372036854775807 (2^63 - 1, integers are read as signed 64-bit), got " + show(node));
    }
    return true;
  }

  void check_bounds(const std::string& path, const YAML::Node& node, const KeySpec& spec, double v) const {
    const ParameterRange range{path, spec.min, spec.max, spec.min_exclusive, spec.max_exclusive};
    if (within(range, v)) return;
    const std::string reason = spec.bounds_reason.empty() ? "" : " (" + spec.bounds_reason + ")";
    fail(path, node, describe(range) + ", got " + show(node) + reason);
  }

  static std::string show(const YAML::Node& node) {
    if (node.IsScalar()) return "'" + printable(node.Scalar()) + "'";
    if (node.IsSequence()) {  // a short list of plain values as written ([8, -4, 3], [nan, 0]), else its length
      std::string items;
      bool plain = node.size() > 0 && node.size() <= 4;
      for (std::size_t i = 0; plain && i < node.size(); ++i) {
        plain = node[i].IsScalar();
        if (plain) items += (i == 0 ? "" : ", ") + printable(node[i].Scalar(), 24);
      }
      if (plain) return "[" + items + "]";
      return "a list of " + std::to_string(node.size()) + (node.size() == 1 ? " entry" : " entries");
    }
    if (node.IsMap()) return "a map";
    return "nothing";
  }

  [[noreturn]] void fail(const std::string& path, const YAML::Node& node, const std::string& message) const {
    if (doc_.overridden(path)) throw InputError(doc_.override_label() + " " + path + ": " + message);
    throw InputError(doc_.where(path, node) + path + " " + message);
  }

  const Document& doc_;
  std::string type_;
};

// The input files the config names can be opened: a missing one is said with its key and line now, not by
// the reader of the file after the work before it.
void require_readable_inputs(const Reader& reader, const std::string& type) {
  for (const KeySpec& k : config_schema()) {
    if (!k.input || !applies_to(k, type) || !reader.is_set(k.path)) continue;
    const std::string file = reader.input_path(k.path);
    if (file.empty()) continue;
    if (const std::string problem = matrix_market_file_problem(file); !problem.empty())  // (every input is one)
      reader.fail_at(k.path, k.path + " " + printable_path(file) + " " + problem);
    if (std::ifstream(file).fail()) {
      const int error = errno;
      // A word where a path goes (`rhs: ones`): the key takes a file, and its default needs none.
      const bool word = error == ENOENT && !std::filesystem::path(file).has_extension();
      reader.fail_at(k.path, k.path + " " + printable_path(file) + " cannot be read (" + std::strerror(error) + ")" +
                                 (word ? ": " + k.path + " names a file; left empty it takes its default" : ""));
    }
  }
}

// The settings as read, in the schema's order and in one form (numbers as the reader took them, input paths
// resolved, a key not given at its default): the same for documents that say the same thing another way
// (the order of the keys or of the --set options, 1e-8 or 1.0e-8, a default written out or left out).
std::string canonical_settings(const Reader& reader, const std::string& type) {
  std::ostringstream out;
  out << std::setprecision(17) << "problem.type=" << type << '\n';
  for (const KeySpec& k : config_schema()) {
    // A key without a default (a required file, the backend's SpGEMM) reads as its absence when not given.
    if (!k.read || !applies_to(k, type) || (!reader.is_set(k.path) && k.default_yaml.empty())) continue;
    out << k.path << '=';
    switch (k.kind) {
      case KeyKind::integer: out << reader.integer(k.path); break;
      case KeyKind::number: out << reader.number(k.path); break;
      case KeyKind::text:
      case KeyKind::choice: out << reader.text(k.path); break;
      case KeyKind::path: out << (k.input ? reader.input_path(k.path) : reader.text(k.path)); break;
      case KeyKind::integer_list:
        for (const std::int64_t v : reader.integer_list(k.path)) out << v << ',';
        break;
      case KeyKind::number_list:
        for (const double v : reader.number_list(k.path)) out << v << ',';
        break;
      case KeyKind::pair_list:
        for (const auto& [a, b] : reader.pair_list(k.path)) out << a << ':' << b << ',';
        break;
    }
    out << '\n';
  }
  return out.str();
}

Config read(const Document& doc, int ranks = 1, bool inputs_on_disk = false, bool problem_given = true) {
  // problem.type decides which problem keys exist, so it is read first.
  const Reader pre(doc, "");
  const std::string type = pre.text("problem.type");
  check_keys(doc, doc.root(), "", type);
  const Reader reader(doc, type);

  Config c;
  c.source = doc.name();
  c.fingerprint = std::hash<std::string>{}(canonical_settings(reader, type));
  c.ranks = ranks;
  for (const KeySpec& k : config_schema()) {
    if (applies_to(k, type) && k.read && reader.is_set(k.path)) k.read(reader, c);
  }
  check_config(reader, c, problem_given);
  if (inputs_on_disk) require_readable_inputs(reader, type);
  return c;
}

// settings_required: a file that holds no settings, with no --set either, is refused (a truncated or
// wrong file, rather than a request for the default problem of 2 million unknowns).
Config read_text(const std::string& yaml_text, const std::string& name, const std::vector<std::string>& overrides,
                 const std::string& base_folder, int ranks, bool inputs_on_disk, bool settings_required = false) {
  Document doc(yaml_text, name);
  if (settings_required && doc.empty_text() && overrides.empty())
    throw InputError(name + " holds no settings (it is empty, only comments, or sections without values): a "
                     "truncated file? Give at least "
                     "problem.type (configs/poisson.yaml sets up the default problem)");
  doc.set_base_folder(base_folder);
  for (const std::string& o : overrides) doc.apply_override(o);
  Config c = read(doc, ranks, inputs_on_disk);
  c.overrides = overrides;
  return c;
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& name, const std::vector<std::string>& overrides,
                    const std::string& base_folder, int ranks) {
  return read_text(yaml_text, name, overrides, base_folder, ranks, /*inputs_on_disk=*/false);
}

Config parse_solver_settings(const std::vector<std::string>& assignments, const std::string& label) {
  Document doc("", label);
  doc.set_override_label(label);
  for (const std::string& a : assignments) {
    const std::string key = a.substr(0, a.find('='));
    if (key == "amg" || key == "solver")
      throw InputError(label + " " + key + ": give the section's keys (" + key + ".KEY=VALUE; in Python a dict)");
    if (key == "solver.print_every")
      throw InputError(label + " " + key + ": the program's progress lines, not a solver parameter (a Solver "
                       "prints nothing: its solve() returns the residual history)");
    if (key == "solver.initial_guess")
      throw InputError(label + " " + key + ": where the program's time steps start, not a solver parameter (give "
                       "the solve its starting vector: x0 in Python, SolveOptions::initial_guess in C++)");
    if (key == "amg.compare_spgemm" || key == "amg.compare_runs")
      throw InputError(label + " " + key + ": the SpGEMM comparison is the program's (--compare-spgemm), not a "
                       "solver parameter");
    const bool solver_key = key == "backend" || key.rfind("amg.", 0) == 0 || key.rfind("solver.", 0) == 0;
    if (!solver_key)
      throw InputError(label + " " + key + ": not a solver parameter (the solver takes backend, amg.* and solver.*)" +
                       named_elsewhere(key));
    doc.apply_override(a);
  }
  return read(doc, 1, false, /*problem_given=*/false);
}

namespace {
// Whether a text starts as a Matrix Market file: its banner, in any case, after a byte-order mark if any.
bool is_matrix_market_banner(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  constexpr std::string_view banner = "%%matrixmarket";
  return text.size() >= banner.size() &&
         std::equal(banner.begin(), banner.end(), text.begin(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}
}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides, int ranks, bool check_inputs) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("config file " + printable_path(path) + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read config file " + printable_path(path) + ": " + std::strerror(errno));
  // Read up to one byte past the limit: a data file, a device or an endless pipe given by mistake is refused
  // at once instead of filling memory.
  std::string text;
  char block[1 << 16];
  while (text.size() <= kMaxConfigBytes && (in.read(block, sizeof block) || in.gcount() > 0))
    text.append(block, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw InputError("cannot read config file " + printable_path(path));
  if (is_matrix_market_banner(text))  // `amgsolve A.mtx`: what a newcomer tries first
    throw InputError(path + " is a Matrix Market file, not a config: give it in one (problem: {type: "
                     "matrix_market, matrix: " + std::filesystem::path(path).filename().string() + "})");
  if (text.size() > kMaxConfigBytes)
    throw InputError("config file " + printable_path(path) + " is larger than " +
                     std::to_string(kMaxConfigBytes >> 20) + " MiB: not a config (a data file given by mistake?)");
  return read_text(text, path, overrides, std::filesystem::path(path).parent_path().string(), ranks,
                   check_inputs, /*settings_required=*/true);
}

}  // namespace amgsolve

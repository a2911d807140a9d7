#pragma once
// One CSV field (RFC 4180): quoted, with inner quotes doubled, when it holds a comma, a quote or a line
// break; as it is otherwise. For the free text (reasons, errors) in the CSV tables.
#include <string>
#include <string_view>

namespace amgsolve {

inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace amgsolve

#pragma once
// Checks of command-line values shared by the program and the benchmarks (CLI11 validators).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <string>

#include "common/error.hpp"

namespace amgsolve {

// A whole number from `least` to `most`, said so where it is not one (CLI11's Range calls a word "not in
// range"). The help shows the range.
inline CLI::Validator whole_number_in(std::int64_t least, std::int64_t most) {
  return CLI::Validator(
      [least, most](const std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool digits = !text.empty() && end == text.data() + text.size() &&
                            (error == std::errc() || error == std::errc::result_out_of_range);
        if (!digits) return "'" + printable(text) + "' is not a whole number";
        if (error != std::errc() || value < least || value > most)
          return printable(text) + " is not from " + std::to_string(least) + " to " + std::to_string(most);
        return "";
      },
      "from " + std::to_string(least) + " to " + std::to_string(most));
}

}  // namespace amgsolve

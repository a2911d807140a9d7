#pragma once
// Error types. Every failure a user can cause (bad config, bad matrix file, a matrix that is not SPD,
// a problem that does not fit in memory) is an amgsolve::Error whose what() is one self-contained line
// naming the file, key or line at fault. The application prints it and exits non-zero.
#include <cstdio>
#include <stdexcept>
#include <string>

namespace amgsolve {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input (config, matrix file, command line) is wrong.
class InputError : public Error {
 public:
  using Error::Error;
};

// The numerics failed (breakdown, not SPD, NaN) on input that looked valid.
class NumericalError : public Error {
 public:
  using Error::Error;
};

// A number in a message: three significant digits (1e-08, -1, 2.5e+300), where std::to_string's six
// decimals would show 0.000000.
inline std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

// Text from the input as a message shows it: control characters (a NUL, an escape sequence, a line break
// that would split the one-line error) written as \xNN.
inline std::string printable(const std::string& text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      shown += c;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    shown += escaped;
  }
  return shown;
}

// Whether text holds a control character (no file name or choice has one).
inline bool has_control_character(const std::string& text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace amgsolve

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

}  // namespace amgsolve

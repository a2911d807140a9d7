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

// An entry of the matrix is at fault; the message names it by row and column, and a caller that knows
// where the matrix came from (the program: its file) adds that.
class MatrixEntryError : public InputError {
 public:
  using InputError::InputError;
};

// The input does not fit in the memory left (common/memory.hpp's require_memory, before the allocation).
class MemoryLimitError : public InputError {
 public:
  using InputError::InputError;
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
// that would split the one-line error; C1's and the Unicode line separators too) and bytes that are not
// UTF-8 written as \xNN, and text beyond `limit` bytes cut, with its length said (a megabyte of junk in a
// value is not echoed whole).
inline std::string printable(const std::string& text, std::size_t limit = 80);

// A file's path as a message shows it: printable, cut only where it is longer than any real path would be (a
// name too long for the file system is not echoed whole).
inline std::string printable_path(const std::string& path) { return printable(path, 512); }

inline std::string printable(const std::string& text, std::size_t limit) {
  // The length of the well-formed UTF-8 sequence of a printable character at text[i] (RFC 3629's table:
  // no overlong forms, surrogates or code points past U+10FFFF), 0 where none starts there.
  const auto utf8_length = [&](std::size_t i) -> std::size_t {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned lead = byte(0);
    const std::size_t n = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
      if ((byte(k) & 0xc0) != 0x80) return 0;
    const unsigned second = byte(1);
    if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) || (lead == 0xf0 && second < 0x90) ||
        (lead == 0xf4 && second > 0x8f))
      return 0;
    if (lead == 0xc2 && second <= 0x9f) return 0;                               // C1 controls, U+0080..U+009F
    if (lead == 0xe2 && second == 0x80 && (byte(2) == 0xa8 || byte(2) == 0xa9)) return 0;  // U+2028, U+2029
    return n;
  };
  std::string shown;
  for (std::size_t i = 0; i < text.size();) {
    if (shown.size() >= limit) return shown + "... (" + std::to_string(text.size()) + " bytes)";
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t sequence = byte >= 0x80 ? utf8_length(i) : (byte >= 0x20 && byte != 0x7f ? 1 : 0);
    if (sequence > 0) {
      shown.append(text, i, sequence);
      i += sequence;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    shown += escaped;
    ++i;
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

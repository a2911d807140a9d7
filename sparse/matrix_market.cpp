#include "sparse/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string matrix_market_file_problem(const std::string& path) {
  std::error_code ec;
  switch (std::filesystem::status(path, ec).type()) {
    case std::filesystem::file_type::directory: return "is a directory";
    case std::filesystem::file_type::character:
    case std::filesystem::file_type::block: return "is a device, not a file";
    case std::filesystem::file_type::fifo:
    case std::filesystem::file_type::socket:
      return "is a pipe, not a file: a matrix's header is read before the whole, to check its sizes; write it to a "
             "file (a .mtx.gz is read as it is)";
    default: return "";
  }
}

namespace {

// A file, uncompressed when it is gzip data (SuiteSparse's .mtx.gz): zlib reads both, plain text as it is.
class CompressedFile {
 public:
  explicit CompressedFile(const std::string& path) : path_(path) {
    if (const std::string problem = matrix_market_file_problem(path); !problem.empty())
      throw InputError("Matrix Market file " + path + " " + problem);
    file_ = gzopen(path.c_str(), "rb");
    if (!file_) throw InputError("cannot open Matrix Market file " + printable_path(path) + ": " + std::strerror(errno));
    gzbuffer(file_, 1 << 17);
  }
  ~CompressedFile() { gzclose(file_); }
  CompressedFile(const CompressedFile&) = delete;
  CompressedFile& operator=(const CompressedFile&) = delete;

  // Appends up to `bytes` more of the text to `text`; false at the end of the file.
  bool append(std::string& text, std::size_t bytes) {
    const std::size_t before = text.size();
    text.resize(before + bytes);
    const int n = gzread(file_, text.data() + before, static_cast<unsigned>(bytes));
    text.resize(before + static_cast<std::size_t>(std::max(n, 0)));
    // A truncated or corrupt .gz ends like a clean end; gzerror tells them apart.
    int status = Z_OK;
    const char* message = gzerror(file_, &status);
    if (n < 0 || status != Z_OK)
      throw InputError("cannot read Matrix Market file " + path_ + ": " + (message ? message : ""));
    return n > 0;
  }

  // The bytes on disk; for plain text, an upper bound of what the text can hold.
  std::uintmax_t plain_size() const {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path_, ec);
    return !ec && gzdirect(file_) ? size : std::numeric_limits<std::uintmax_t>::max();
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

// Line-oriented cursor over text held in memory or read from a file a block at a time (only the unread
// rest of a block is kept, so a file of any size streams through a few MiB); every error names path:line.
class MatrixMarketScanner {
 public:
  static constexpr std::size_t kBlock = std::size_t{4} << 20;
  // The longest line read (entries and header lines are short; comment lines too, in any file seen).
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

  // name: the file the text came from, for messages.
  MatrixMarketScanner(std::string name, std::string_view text) : path_(std::move(name)), text_(text) {}
  MatrixMarketScanner(std::string name, CompressedFile& file) : path_(std::move(name)), file_(&file) {}

  // Entries the rest of the input can hold at most (a coordinate entry takes at least "1 1\n"; a dense one's
  // "1\n" may exceed it, and its vectors then grow past the reservation): what a header may claim is not
  // reserved beyond that. 0 for gzip data, whose size is unknown (the vectors then grow as they are
  // filled).
  Offset max_entries_left() const {
    const std::uintmax_t left = file_ ? file_->plain_size() : text_.size() - std::min(pos_, text_.size());
    return left == std::numeric_limits<std::uintmax_t>::max() ? 0 : static_cast<Offset>(left / 4 + 1);
  }

  [[noreturn]] void fail(const std::string& message) const {  // at the line read last (the file, before any)
    throw InputError(path_ + (line_no_ > 0 ? ":" + std::to_string(line_no_) : std::string()) + ": " + message);
  }

  // Next line (without the newline); false at end of file.
  bool next_line(std::string_view& line) {
    std::size_t end = text_.find('\n', pos_);
    while (end == std::string_view::npos) {  // a line longer than what is read so far: read on, past it
      const std::size_t searched = text_.size() - pos_;
      if (searched > kMaxLineBytes)  // not held in memory to its end: a compressed file may hide gigabytes
        throw InputError(path_ + ":" + std::to_string(line_no_ + 1) + ": a line longer than " +
                         std::to_string(kMaxLineBytes >> 20) + " MiB: not a Matrix Market file?");
      if (!refill()) break;
      end = text_.find('\n', pos_ + searched);
    }
    if (pos_ >= text_.size()) return false;
    end = std::min(end, text_.size());
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A UTF-8 byte-order mark (some editors write one) is not part of the banner.
    if (line_no_ == 0 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }

  // Next line that is neither blank nor a % comment.
  bool next_data_line(std::string_view& line) {
    while (next_line(line)) {
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos || line[first] == '%') continue;
      line.remove_prefix(first);
      return true;
    }
    return false;
  }

  long line() const { return line_no_; }

 private:
  // Streamed: drops what was read, appends the next block; false at the end of the file (or in memory).
  bool refill() {
    if (!file_) return false;
    buffer_.erase(0, std::min(pos_, buffer_.size()));
    pos_ = 0;
    const bool more = file_->append(buffer_, kBlock);
    text_ = buffer_;
    return more;
  }

  std::string path_;
  CompressedFile* file_ = nullptr;
  std::string buffer_;  // streamed: the unread rest of the blocks read so far
  std::string_view text_;
  std::size_t pos_ = 0;
  long line_no_ = 0;
};

// Parses whitespace-separated numbers from a line.
class Fields {
 public:
  explicit Fields(std::string_view line) : rest_(line) {}

  // The next number; a leading '+' is taken for values (reals by default), not for indices.
  template <class T>
  bool next(T& value, bool plus_sign = std::is_floating_point_v<T>) {
    skip_space();
    if (rest_.empty()) return false;
    const char* begin = rest_.data();
    const char* end = begin + rest_.size();
    if (plus_sign) begin = after_plus_sign(begin, end);
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if constexpr (std::is_floating_point_v<T>)
      if (ec == std::errc::result_out_of_range && underflows(begin, ptr, value)) ec = std::errc();
    if (ec != std::errc() || (ptr != end && *ptr != ' ' && *ptr != '\t')) return false;
    rest_.remove_prefix(static_cast<std::size_t>(ptr - rest_.data()));
    return true;
  }

  bool at_end() {
    skip_space();
    return rest_.empty();
  }

  // Past a value's leading '+' ("+4"), which C's strtod and scipy take and from_chars does not.
  static const char* after_plus_sign(const char* begin, const char* end) {
    return *begin == '+' && end - begin > 1 && begin[1] != '-' && begin[1] != '+' ? begin + 1 : begin;
  }

  // The next whitespace-separated word, not consumed (for messages).
  std::string token() {
    skip_space();
    return std::string(rest_.substr(0, rest_.find_first_of(" \t")));
  }

 private:
  void skip_space() {
    while (!rest_.empty() && (rest_.front() == ' ' || rest_.front() == '\t')) rest_.remove_prefix(1);
  }
  // A number in [begin, end) too small for a double (1e-400), which from_chars leaves unread: the nearest
  // double (0 or a subnormal), as C's strtod and scipy read it. A number too large stays an error.
  template <class T>
  static bool underflows(const char* begin, const char* end, T& value) {
    const std::string text(begin, end);
    const double nearest = std::strtod(text.c_str(), nullptr);
    if (std::abs(nearest) > std::numeric_limits<double>::min()) return false;  // overflow: HUGE_VAL
    value = static_cast<T>(nearest);
    return true;
  }
  std::string_view rest_;
};

MatrixMarketHeader parse_header(MatrixMarketScanner& scan) {
  std::string_view line;
  if (!scan.next_line(line)) scan.fail("empty file, expected a %%MatrixMarket banner");
  std::istringstream banner{std::string(line)};
  std::string tag;
  MatrixMarketHeader h;
  std::string extra;
  banner >> tag >> h.object >> h.format >> h.field >> h.symmetry >> extra;
  h.object = lowercase(h.object);
  h.format = lowercase(h.format);
  h.field = lowercase(h.field);
  h.symmetry = lowercase(h.symmetry);
  if (tag != "%%MatrixMarket") scan.fail("missing %%MatrixMarket banner");
  if (h.object != "matrix") scan.fail("object '" + printable(h.object) + "' is not supported (expected 'matrix')");
  if (h.format != "coordinate" && h.format != "array")
    scan.fail("format '" + printable(h.format) + "' is not 'coordinate' or 'array'");
  if (h.field != "real" && h.field != "integer" && h.field != "pattern" && h.field != "complex" &&
      h.field != "double")
    scan.fail("unknown field '" + printable(h.field) + "'");
  if (h.symmetry != "general" && h.symmetry != "symmetric" && h.symmetry != "skew-symmetric" &&
      h.symmetry != "hermitian")
    scan.fail("unknown symmetry '" + printable(h.symmetry) + "'");
  if (!extra.empty())
    scan.fail("unexpected word '" + printable(extra) + "' after the symmetry (the banner is '%%MatrixMarket matrix "
              "FORMAT FIELD SYMMETRY')");

  if (!scan.next_data_line(line)) scan.fail("missing size line");
  Fields size(line);
  std::int64_t rows = 0, cols = 0, entries = 0;
  const bool coordinate = h.format == "coordinate";
  if (!size.next(rows) || !size.next(cols) || (coordinate && !size.next(entries)) || !size.at_end())
    scan.fail(coordinate ? "size line must be 'rows cols entries'" : "size line must be 'rows cols'");
  constexpr std::int64_t max_index = std::numeric_limits<Index>::max();
  if (rows < 0 || cols < 0 || entries < 0) scan.fail("negative size");
  if (rows > max_index || cols > max_index)
    scan.fail("dimension exceeds the 32-bit index limit of " + std::to_string(max_index));
  // A dense array stores every entry column by column; a symmetric one the lower triangle (with the
  // diagonal), a skew-symmetric one the strictly lower triangle.
  if (!coordinate) {
    entries = h.symmetry == "general"          ? rows * cols
              : h.symmetry == "skew-symmetric" ? rows * (rows - 1) / 2
                                               : rows * (rows + 1) / 2;
  }
  if (coordinate && static_cast<double>(entries) > static_cast<double>(rows) * static_cast<double>(cols))
    scan.fail("announces " + std::to_string(entries) + " entries, more than rows x columns");
  h.rows = static_cast<Index>(rows);
  h.cols = static_cast<Index>(cols);
  h.entries = entries;
  return h;
}

void require_real(const MatrixMarketHeader& h, MatrixMarketScanner& scan,
                  PatternValues pattern = PatternValues::reject) {
  if (h.field == "pattern" && pattern == PatternValues::reject)
    scan.fail("pattern matrix has no values; a linear system needs a real matrix");
  if (h.field == "complex") scan.fail("complex matrices are not supported (real values only)");
  if (h.symmetry == "hermitian") scan.fail("hermitian symmetry is for complex matrices");
}

// An entry's value in a file whose field is 'integer': a whole number in 64 bits (2.5 is no integer, and
// reading it as a real would solve another system than the file's writer meant).
double parse_integer_value(Fields& fields, MatrixMarketScanner& scan) {
  std::int64_t v = 0;
  if (fields.next(v, true)) return static_cast<double>(v);
  const std::string token = fields.token();
  if (token.empty()) scan.fail("expected an integer value, found the end of the line");
  const std::string digits = token.substr(token[0] == '+' || token[0] == '-' ? 1 : 0);
  if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos)
    scan.fail("value " + printable(token) + " is beyond the range of 64-bit integers (the banner says 'integer')");
  scan.fail("expected an integer value (the banner says 'integer'), got '" + printable(token) + "'");
}

double parse_value(Fields& fields, MatrixMarketScanner& scan, const MatrixMarketHeader& h) {
  if (h.field == "integer") return parse_integer_value(fields, scan);
  double v = 0;
  if (fields.next(v)) {
    if (!std::isfinite(v)) scan.fail("value is not finite (NaN or infinity)");
    return v;
  }
  const std::string token = fields.token();
  if (token.empty()) scan.fail("expected a numeric value, found the end of the line");
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(Fields::after_plus_sign(token.data(), end), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end)  // a number, too large (one too small was read)
    scan.fail("value " + printable(token) + " is beyond the range of a double (magnitudes up to about 1.8e308)");
  scan.fail("expected a numeric value, got '" + printable(token) + "'");
}

// The entries of a matrix after its header (coordinate or dense array), a batch at a time, each checked as
// it is read.
class EntryReader {
 public:
  EntryReader(MatrixMarketScanner& scan, const MatrixMarketHeader& h, PatternValues pattern)
      : scan_(scan), h_(h), ones_(h.field == "pattern"), symmetric_(h.symmetry != "general"),
        dense_(h.format == "array"), mirror_sign_(h.symmetry == "skew-symmetric" ? -1.0 : 1.0) {
    require_real(h, scan, pattern);
    // Mirrored storage: an entry's mirror must land inside the matrix (and a triangle count mean anything).
    if (symmetric_ && h.rows != h.cols) scan.fail("a " + h.symmetry + " matrix must be square");
    if (dense_ && ones_) scan.fail("a dense 'array' file cannot be a pattern");
    next_dense_ = {0, first_dense_row(0)};
  }

  // What the whole matrix will hold at most, as far as the input tells (for a reservation).
  Offset expected_stored() const {
    const Offset entries = std::min(h_.entries, scan_.max_entries_left());
    return symmetric_ ? 2 * entries : entries;
  }

  // Appends the next entries until `out` holds at least `limit` (an off-diagonal entry of symmetric storage
  // adds its mirror too) or all are read; false once all are read and nothing follows them.
  bool next_batch(std::vector<Triplet<double>>& out, std::size_t limit) {
    std::string_view line;
    for (; read_ < h_.entries && out.size() < limit; ++read_) {
      if (!scan_.next_data_line(line))
        scan_.fail("file ends after " + std::to_string(read_) + " of " + std::to_string(h_.entries) + " entries");
      append_entry(line, out);
    }
    if (read_ < h_.entries) return true;
    if (scan_.next_data_line(line)) scan_.fail("more entries than the " + std::to_string(h_.entries) + " announced");
    return false;
  }

 private:
  void append_entry(std::string_view line, std::vector<Triplet<double>>& out) {
    if (dense_) return append_dense_entry(line, out);
    Fields fields(line);
    std::int64_t i = 0, j = 0;
    if (!fields.next(i) || !fields.next(j)) scan_.fail("expected 'row column value'");
    if (i < 1 || i > h_.rows)
      scan_.fail("row index " + std::to_string(i) + " out of range 1.." + std::to_string(h_.rows));
    if (j < 1 || j > h_.cols)
      scan_.fail("column index " + std::to_string(j) + " out of range 1.." + std::to_string(h_.cols));
    const double v = ones_ ? 1.0 : parse_value(fields, scan_, h_);
    if (!fields.at_end())
      scan_.fail(ones_ ? "unexpected text after the indices of a pattern entry" : "unexpected text after the value");
    // Symmetric storage names each off-diagonal pair once, in either triangle (the lower one by the
    // standard, the upper one by some writers): both are mirrored, and a pair given in both triangles is an
    // entry given twice (read_whole_matrix).
    const Index r = static_cast<Index>(i - 1), c = static_cast<Index>(j - 1);
    out.push_back({r, c, v});
    if (symmetric_ && r != c) out.push_back({c, r, mirror_sign_ * v});
  }

  // The next value of a dense array, column by column (the lower triangle's part of each column when
  // symmetric). Zeros are left out: the matrix is stored sparse.
  void append_dense_entry(std::string_view line, std::vector<Triplet<double>>& out) {
    Fields fields(line);
    const double v = parse_value(fields, scan_, h_);
    if (!fields.at_end()) scan_.fail("unexpected text after the value (a dense 'array' file has one a line)");
    auto& [col, row] = next_dense_;
    if (v != 0) {
      out.push_back({row, col, v});
      if (symmetric_ && row != col) out.push_back({col, row, mirror_sign_ * v});
    }
    if (++row == h_.rows) row = first_dense_row(++col);
  }
  // The row a dense array's column starts at: 0, the diagonal (symmetric) or below it (skew-symmetric).
  Index first_dense_row(Index col) const {
    return !symmetric_ ? 0 : h_.symmetry == "skew-symmetric" ? col + 1 : col;
  }

  MatrixMarketScanner& scan_;
  const MatrixMarketHeader& h_;
  const bool ones_, symmetric_, dense_;
  const double mirror_sign_;
  Offset read_ = 0;
  std::pair<Index, Index> next_dense_;  // the (column, row) the next value of a dense array is at
};

Vector<double> read_vector(MatrixMarketScanner& scan) {
  const MatrixMarketHeader h = parse_header(scan);
  require_real(h, scan);
  if (h.cols != 1) scan.fail("a vector must have exactly 1 column, this has " + std::to_string(h.cols));
  if (h.symmetry != "general")  // a mirrored entry of a one-column "matrix" would land outside it
    scan.fail("a vector is stored 'general', this file says '" + printable(h.symmetry) + "'");
  Vector<double> x(static_cast<std::size_t>(h.rows), 0.0);
  Array<std::uint8_t> given(h.format == "coordinate" ? static_cast<std::size_t>(h.rows) : 0, 0);
  std::string_view line;
  for (Offset e = 0; e < h.entries; ++e) {
    if (!scan.next_data_line(line))
      scan.fail("file ends after " + std::to_string(e) + " of " + std::to_string(h.entries) + " entries");
    Fields fields(line);
    std::int64_t i = e + 1, j = 1;
    if (h.format == "coordinate") {
      if (!fields.next(i) || !fields.next(j)) scan.fail("expected 'row column value'");
      if (i < 1 || i > h.rows) scan.fail("row index " + std::to_string(i) + " out of range 1.." + std::to_string(h.rows));
      if (j != 1) scan.fail("column index must be 1 in a vector");
      if (given[static_cast<std::size_t>(i - 1)]++) scan.fail("row " + std::to_string(i) + " is given twice");
    }
    x[static_cast<std::size_t>(i - 1)] = parse_value(fields, scan, h);
    if (!fields.at_end()) scan.fail("unexpected text after the value");
  }
  if (scan.next_data_line(line)) scan.fail("more entries than the " + std::to_string(h.entries) + " announced");
  return x;
}

CsrMatrix<double> read_whole_matrix(MatrixMarketScanner& scan, const std::string& path, PatternValues pattern) {
  const MatrixMarketHeader h = parse_header(scan);
  EntryReader entries(scan, h, pattern);
  std::vector<Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(entries.expected_stored()));
  while (entries.next_batch(triplets, std::numeric_limits<std::size_t>::max())) {
  }
  std::pair<Index, Index> duplicate{-1, -1};
  CsrMatrix<double> A = csr_from_triplets(h.rows, h.cols, std::move(triplets), &duplicate);
  if (duplicate.first >= 0)
    throw InputError(duplicate_entries_message(path, duplicate.first, duplicate.second, h.symmetry != "general"));
  return A;
}

}  // namespace

std::string duplicate_entries_message(const std::string& path, Index row, Index col, bool symmetric_storage) {
  return path + ": entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) + ") is given more than once " +
         (symmetric_storage ? "(a symmetric file gives each pair (i, j), (j, i) once, in one triangle)"
                            : "(each place of the matrix once)");
}

struct MatrixMarketReader::State {
  explicit State(const std::string& path, PatternValues pattern)
      : file(path), scan(path, file), header(parse_header(scan)), entries(scan, header, pattern) {}
  CompressedFile file;
  MatrixMarketScanner scan;
  MatrixMarketHeader header;
  EntryReader entries;
};

MatrixMarketReader::MatrixMarketReader(const std::string& path, PatternValues pattern)
    : state_(std::make_unique<State>(path, pattern)) {}
MatrixMarketReader::~MatrixMarketReader() = default;
const MatrixMarketHeader& MatrixMarketReader::header() const { return state_->header; }
bool MatrixMarketReader::next_batch(std::vector<Triplet<double>>& out, std::size_t limit) {
  return state_->entries.next_batch(out, limit);
}

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  CompressedFile file(path);
  MatrixMarketScanner scan(path, file);
  return parse_header(scan);
}

MatrixMarketHeader parse_matrix_market_header(std::string_view text, const std::string& name) {
  MatrixMarketScanner scan(name, text);
  return parse_header(scan);
}

CsrMatrix<double> read_matrix_market(const std::string& path, PatternValues pattern) {
  CompressedFile file(path);
  MatrixMarketScanner scan(path, file);
  return read_whole_matrix(scan, path, pattern);
}

Vector<double> read_matrix_market_vector(const std::string& path) {
  CompressedFile file(path);
  MatrixMarketScanner scan(path, file);
  return read_vector(scan);
}

CsrMatrix<double> parse_matrix_market(std::string_view text, const std::string& path, PatternValues pattern) {
  MatrixMarketScanner scan(path, text);
  return read_whole_matrix(scan, path, pattern);
}

Vector<double> parse_matrix_market_vector(std::string_view text, const std::string& path) {
  MatrixMarketScanner scan(path, text);
  return read_vector(scan);
}

namespace {

// fopen wrapper writing to the AtomicFile's temporary name.
struct OutFile {
  explicit OutFile(const AtomicFile& target) : f(std::fopen(target.temp_path().c_str(), "w")) {
    if (!f) throw Error("cannot create " + target.described() + ": " + std::strerror(errno));
  }
  ~OutFile() {
    if (f) std::fclose(f);
  }
  void close(const AtomicFile& target) {
    const bool ok = std::ferror(f) == 0;
    const int write_error = errno;  // the failed write's (ENOSPC: a full disk), before fclose sets its own
    const bool closed = std::fclose(f) == 0;
    f = nullptr;
    if (!ok || !closed)
      throw Error("error while writing " + target.described() + ": " + std::strerror(ok ? errno : write_error));
  }
  std::FILE* f;
};

}  // namespace

void write_matrix_market(const std::string& path, const CsrMatrix<double>& A, bool symmetric) {
  AtomicFile target(path, "matrix file");
  OutFile out(target);
  Offset stored = 0;
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) stored += (!symmetric || A.col[k] <= i) ? 1 : 0;
  std::fprintf(out.f, "%%%%MatrixMarket matrix coordinate real %s\n", symmetric ? "symmetric" : "general");
  std::fprintf(out.f, "%d %d %lld\n", A.rows, A.cols, static_cast<long long>(stored));
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (!symmetric || A.col[k] <= i) std::fprintf(out.f, "%d %d %.17g\n", i + 1, A.col[k] + 1, A.val[k]);
  out.close(target);
  target.commit();
}

void write_matrix_market_vector(const std::string& path, const Vector<double>& x) {
  write_matrix_market_columns(path, {&x});
}

void write_matrix_market_columns(const std::string& path, const std::vector<const Vector<double>*>& columns) {
  const std::size_t rows = columns.empty() ? 0 : columns.front()->size();
  for (const Vector<double>* column : columns)
    if (column->size() != rows) throw Error("internal: columns of " + std::to_string(rows) + " and " + std::to_string(column->size()) + " rows");
  AtomicFile target(path, "solution file", kSolutionMark);
  OutFile out(target);
  std::fprintf(out.f, "%.*s\n%zu %zu\n", static_cast<int>(kSolutionMark.text.size()), kSolutionMark.text.data(),
               rows, columns.size());
  for (const Vector<double>* column : columns)  // an array lists its entries column by column
    for (double v : *column) std::fprintf(out.f, "%.17g\n", v);
  out.close(target);
  target.commit();
}

}  // namespace amgsolve

#pragma once
// Matrix Market (https://math.nist.gov/MatrixMarket/formats.html) reader and writer.
// Errors name the file and line ("A.mtx:17: column index 9 out of range 1..8") and throw InputError.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/output_mark.hpp"
#include "sparse/csr.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

struct MatrixMarketHeader {
  std::string object;    // matrix
  std::string format;    // coordinate | array
  std::string field;     // real | integer | pattern | complex
  std::string symmetry;  // general | symmetric | skew-symmetric | hermitian
  Index rows = 0;
  Index cols = 0;
  Offset entries = 0;  // stored entries (coordinate), or the values a dense array lists (rows*cols, a triangle's)

  // The matrix's entries once a symmetric file's triangle is mirrored: a bound before reading (the
  // diagonal, not mirrored, counted twice).
  Offset entries_with_mirrors() const { return symmetry == "general" ? entries : 2 * entries; }
};

// Reads only the banner and size line (cheap: used to estimate memory before loading).
MatrixMarketHeader read_matrix_market_header(const std::string& path);
// Why `path` cannot be a Matrix Market input although it exists ("is a directory", "is a device, not a file",
// "is a pipe, not a file: ..."), or "". Decided without opening it: a FIFO nobody writes to would wait for
// ever. A device never ends (/dev/zero), and a pipe (`<(zcat A.mtx)`, a FIFO) can be read only once, where a
// matrix's header is read first to check its sizes, then the whole.
std::string matrix_market_file_problem(const std::string& path);

// What a "pattern" file (positions, no values) reads as. A linear system needs values, so by default
// it is an error; benchmarks of sparse products read graphs as 0/1 matrices (unit weights), as
// SuiteSparse:GraphBLAS and the SpGEMM literature do.
enum class PatternValues { reject, ones };

// Reads a real/integer matrix, sparse ('coordinate') or dense ('array', its zeros left out), or a pattern
// one with PatternValues::ones; symmetric storage (each off-diagonal pair once, in the lower triangle or
// the upper) is expanded to both triangles. Complex matrices are rejected (amgsolve is real-valued).
CsrMatrix<double> read_matrix_market(const std::string& path, PatternValues pattern = PatternValues::reject);

// Reads a vector: an n x 1 array or coordinate matrix (missing coordinate entries are 0).
Vector<double> read_matrix_market_vector(const std::string& path);

// A matrix's entries a batch at a time, the file streamed through a few MiB of memory (plain or gzip): what
// reads a matrix too large for one process, dealing each batch out to the ranks that own its rows
// (app/ranks.cpp). The same checks and messages as read_matrix_market, but for duplicates, which only the
// assembled rows show (duplicate_entries_message).
class MatrixMarketReader {
 public:
  explicit MatrixMarketReader(const std::string& path, PatternValues pattern = PatternValues::reject);
  ~MatrixMarketReader();
  const MatrixMarketHeader& header() const;
  // Appends entries to `out` until it holds at least `limit` or the file's entries are all read (an
  // off-diagonal entry of symmetric storage adds its mirror); false once they are all read and nothing
  // follows them.
  bool next_batch(std::vector<Triplet<double>>& out, std::size_t limit);

 private:
  struct State;
  std::unique_ptr<State> state_;
};
// "path: entry (row, col) is given more than once (...)", the place counted from 1 (0-based arguments); the
// parenthesis says what symmetric storage expects where it is that.
std::string duplicate_entries_message(const std::string& path, Index row, Index col, bool symmetric_storage);

// The same from text in memory (what the readers do after reading the file, gzip-compressed or not);
// `name` stands for the file in messages.
MatrixMarketHeader parse_matrix_market_header(std::string_view text, const std::string& name);
CsrMatrix<double> parse_matrix_market(std::string_view text, const std::string& name,
                                      PatternValues pattern = PatternValues::reject);
Vector<double> parse_matrix_market_vector(std::string_view text, const std::string& name);

// Writes A as "coordinate real general" (or the lower triangle as "symmetric" when asked).
void write_matrix_market(const std::string& path, const CsrMatrix<double>& A, bool symmetric = false);

// Writes x as an n x 1 "array real general" file, with the comment kSolutionMark below the banner.
inline constexpr OutputMark kSolutionMark{"%%MatrixMarket matrix array real general\n% written by amgsolve", true};
void write_matrix_market_vector(const std::string& path, const Vector<double>& x);
// The same for several vectors of one length: an n x columns array (several right-hand sides' solutions).
void write_matrix_market_columns(const std::string& path, const std::vector<const Vector<double>*>& columns);

}  // namespace amgsolve

// Matrix Market reader/writer: round trips, the shared SuiteSparse files, malformed input.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "problems/problem.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using test::ScratchDir;

std::string write_text(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

// The message of the InputError thrown by reading `text` as a matrix.
std::string read_error(const std::string& text) {
  ScratchDir dir;
  const std::string path = write_text(dir, "bad.mtx", text);
  return test::error_of<InputError>([&] { read_matrix_market(path); });
}

// The solver's problem leaves out the off-diagonal entries a file stores as 0 (each would be carried into
// every Galerkin product), in the reader's matrix and in the rows of a rank alike; a diagonal 0 stays, to be
// refused by name.
TEST(MatrixMarket, AProblemLeavesOutStoredZerosOffTheDiagonal) {
  ScratchDir dir;
  const std::string path = write_text(dir, "z.mtx",
                                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n"
                                      "1 1 4\n2 1 0\n2 2 4\n3 2 -1\n3 3 4\n");
  ProblemSpec spec;
  spec.type = ProblemType::matrix_market;
  spec.matrix_market.matrix = path;
  const LinearProblem p = make_problem(spec);
  EXPECT_EQ(p.A->nnz(), 5);  // the diagonal and the pair (3, 2), (2, 3)
  for (double v : p.A->val) EXPECT_NE(v, 0.0);

  CsrMatrix<double> rows = read_matrix_market(path);  // rows 2 and 3 of a rank, global columns
  CsrMatrix<double> last_two(2, 3);
  last_two.row_ptr = {0, 0, 0};
  for (Index i = 1; i < 3; ++i) {
    for (Offset k = rows.row_begin(i); k < rows.row_end(i); ++k) {
      last_two.col.push_back(rows.col[k]);
      last_two.val.push_back(rows.val[k]);
    }
    last_two.row_ptr[i] = static_cast<Offset>(last_two.col.size());
  }
  EXPECT_EQ(drop_stored_zeros(last_two, 1), 1);
  EXPECT_EQ(last_two.row_ptr, (Array<Offset>{0, 2, 4}));
  EXPECT_EQ(last_two.col, (Array<Index>{1, 2, 1, 2}));

  CsrMatrix<double> zero_diagonal = read_matrix_market(path);
  zero_diagonal.val[0] = 0.0;
  EXPECT_EQ(drop_stored_zeros(zero_diagonal), 2) << "only the off-diagonal pair";
  EXPECT_EQ(zero_diagonal.val[0], 0.0);
}

TEST(MatrixMarket, RoundTripGeneralAndSymmetric) {
  ScratchDir dir;
  const CsrMatrix<double> A = test::random_sparse(37, 23, 0.1, 9, {4}, {5});
  write_matrix_market(dir.file("a.mtx"), A);
  const CsrMatrix<double> B = read_matrix_market(dir.file("a.mtx"));
  EXPECT_EQ(B.row_ptr, A.row_ptr);
  EXPECT_EQ(B.col, A.col);
  EXPECT_EQ(B.val, A.val);  // %.17g is exact for doubles

  CsrMatrix<double> S = test::random_sparse(30, 30, 0.1, 4);
  S = test::from_eigen(test::to_eigen(S) + Eigen::SparseMatrix<double>(test::to_eigen(S).transpose()));
  write_matrix_market(dir.file("s.mtx"), S, /*symmetric=*/true);
  const CsrMatrix<double> T = read_matrix_market(dir.file("s.mtx"));
  EXPECT_EQ(test::to_dense(T), test::to_dense(S));
  EXPECT_EQ(read_matrix_market_header(dir.file("s.mtx")).symmetry, "symmetric");
}

TEST(MatrixMarket, VectorRoundTripAndCoordinateVectors) {
  ScratchDir dir;
  const Vector<double> x = {1.5, -2.0, 0.0, 1e-300};
  write_matrix_market_vector(dir.file("x.mtx"), x);
  EXPECT_EQ(read_matrix_market_vector(dir.file("x.mtx")), x);
  write_text(dir, "c.mtx", "%%MatrixMarket matrix coordinate real general\n3 1 1\n2 1 7\n");
  EXPECT_EQ(read_matrix_market_vector(dir.file("c.mtx")), (Vector<double>{0, 7, 0}));
}

// A pattern file is an error for a linear system (the malformed-input cases below), but reads as a
// 0/1 matrix when asked (spgemm-bench multiplies graphs); symmetric storage is mirrored as for values.
TEST(MatrixMarket, PatternReadsAsOnesWhenAsked) {
  ScratchDir dir;
  const std::string path =
      write_text(dir, "p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n");
  const CsrMatrix<double> A = read_matrix_market(path, PatternValues::ones);
  Eigen::MatrixXd expected(3, 3);
  expected << 1, 0, 1, 0, 0, 1, 1, 1, 0;
  EXPECT_EQ(test::to_dense(A), expected);
  EXPECT_THROW(read_matrix_market(path), InputError);
  write_text(dir, "v.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 5\n");
  try {
    read_matrix_market(dir.file("v.mtx"), PatternValues::ones);
    ADD_FAILURE() << "a value on a pattern entry was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v.mtx:3: unexpected text after the indices"), std::string::npos) << e.what();
  }
}

// Symmetric storage names each off-diagonal pair once; the standard puts it in the lower triangle, some
// writers in the upper one: the same matrix either way.
TEST(MatrixMarket, SymmetricStorageInTheUpperTriangleReadsAsInTheLower) {
  const std::string lower = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n";
  const std::string upper = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n1 2 -1\n2 3 -2\n3 3 5\n";
  const std::string mixed = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n1 2 -1\n3 2 -2\n3 3 5\n";
  Eigen::MatrixXd expected(3, 3);
  expected << 4, -1, 0, -1, 0, -2, 0, -2, 5;
  for (const std::string& text : {lower, upper, mixed})
    EXPECT_EQ(test::to_dense(parse_matrix_market(text, "s.mtx")), expected) << text;
  const std::string skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 2 3\n";
  Eigen::MatrixXd expected_skew(2, 2);
  expected_skew << 0, 3, -3, 0;
  EXPECT_EQ(test::to_dense(parse_matrix_market(skew, "k.mtx")), expected_skew);
}

// A dense 'array' file lists every entry column by column (a symmetric one its lower triangle's); the
// matrix keeps its nonzeros.
TEST(MatrixMarket, DenseArrayFilesReadAsTheirNonzeros) {
  const CsrMatrix<double> general =
      parse_matrix_market("%%MatrixMarket matrix array real general\n2 3\n1\n0\n3\n4\n0\n-6\n", "g.mtx");
  Eigen::MatrixXd expected_general(2, 3);
  expected_general << 1, 3, 0, 0, 4, -6;
  EXPECT_EQ(test::to_dense(general), expected_general);
  EXPECT_EQ(general.nnz(), 4);
  EXPECT_TRUE(is_valid_csr(general));

  const CsrMatrix<double> symmetric = parse_matrix_market(
      "%%MatrixMarket matrix array real symmetric\n3 3\n% comment\n4\n-1\n0\n5\n-2\n6\n", "s.mtx");
  Eigen::MatrixXd expected_symmetric(3, 3);
  expected_symmetric << 4, -1, 0, -1, 5, -2, 0, -2, 6;
  EXPECT_EQ(test::to_dense(symmetric), expected_symmetric);

  const CsrMatrix<double> skew =
      parse_matrix_market("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n", "k.mtx");
  Eigen::MatrixXd expected_skew(3, 3);
  expected_skew << 0, -1, -2, 1, 0, -3, 2, 3, 0;
  EXPECT_EQ(test::to_dense(skew), expected_skew);

  try {  // a pattern has no values to list densely
    parse_matrix_market("%%MatrixMarket matrix array pattern general\n1 1\n", "p.mtx", PatternValues::ones);
    ADD_FAILURE() << "a dense pattern file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.mtx:2: a dense 'array' file cannot be a pattern"), std::string::npos)
        << e.what();
  }
}

TEST(MatrixMarket, ReadsSharedSuiteSparseMatrix) {
  AMGSOLVE_REQUIRE_SHARED_MATRIX(path, "bcsstk01");
  const CsrMatrix<double> A = read_matrix_market(path);
  EXPECT_EQ(A.rows, 48);
  EXPECT_EQ(A.cols, 48);
  // 224 stored entries of the lower triangle, 48 of them diagonal: 2 * 224 - 48 in full.
  EXPECT_EQ(A.nnz(), 2 * 224 - 48);
  EXPECT_TRUE(is_valid_csr(A));
  EXPECT_EQ(largest_asymmetry(A).relative, 0.0);
}

TEST(MatrixMarket, MalformedFilesAreRejectedWithFileAndLine) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"", "empty file"},
      {"hello\n", ":1: missing %%MatrixMarket banner"},
      {"%%MatrixMarket matrix coordinate real nonsense\n2 2 1\n1 1 1\n", "unknown symmetry"},
      {"%%MatrixMarket vector coordinate real general\n", "object 'vector'"},
      {banner + "% comment\n2 2\n", ":3: size line"},
      {banner + "2 2 2\n1 1 1\n", "file ends after 1 of 2 entries"},
      {banner + "2 2 1\n1 1 1\n2 2 1\n", ":4: more entries"},
      {banner + "2 2 1\n3 1 1\n", ":3: row index 3 out of range 1..2"},
      {banner + "2 2 1\n1 0 1\n", ":3: column index 0 out of range"},
      {banner + "2 2 1\n1 1 abc\n", ":3: expected a numeric value"},
      {banner + "2 2 1\n1 1 +-4\n", ":3: expected a numeric value"},
      {banner + "2 2 1\n1 1 " + std::string(5000, 'x') + "\n", "got '" + std::string(80, 'x') + "... (5000 bytes)'"},
      {banner + "2 2 1\n1 1 4" + std::string(1, '\0') + "\n", "got '4\\x00'"},
      {banner + "2 2 1\n1 1 nan\n", ":3: value is not finite"},
      {banner + "2 2 1\n1 1 1e400\n", ":3: value 1e400 is beyond the range of a double"},
      {banner + "2 2 1\n1 1 -1e400\n", ":3: value -1e400 is beyond the range of a double"},
      {banner + "2 2 1\n1 1 +1e400\n", ":3: value +1e400 is beyond the range of a double"},
      // a number of 5,000 digits: shown cut, as any long token is
      {banner + "2 2 1\n1 1 1" + std::string(4999, '0') + "\n",
       ":3: value 1" + std::string(79, '0') + "... (5000 bytes) is beyond the range of a double"},
      {banner + "2 2 1\n1 1 1e-400x\n", ":3: expected a numeric value, got '1e-400x'"},
      {banner + "2 2 1\n1 1 1e400x\n", ":3: expected a numeric value, got '1e400x'"},
      {banner + "2 2 1\n1 1\n", ":3: expected a numeric value, found the end of the line"},
      {banner + "2 2 1\n1 1 1 9\n", ":3: unexpected text"},
      // An 'integer' file holds whole numbers in 64 bits (2.5 was read as a real, another system than meant).
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n",
       ":3: expected an integer value (the banner says 'integer'), got '2.5'"},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2e0\n", "got '2e0'"},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 99999999999999999999\n",
       ":3: value 99999999999999999999 is beyond the range of 64-bit integers"},
      {"%%MatrixMarket matrix array integer general\n1 1\n1.5\n", ":3: expected an integer value"},
      {"%%MatrixMarket matrix coordinate real general extra\n2 2 1\n1 1 1\n",
       ":1: unexpected word 'extra' after the symmetry"},
      {banner + "2 2 2\n1 1 1\n1 1 2\n", "entry (1, 1) is given more than once"},
      {"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", "pattern matrix has no values"},
      {"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", "complex"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 1\n2 1 1\n",
       "entry (1, 2) is given more than once (a symmetric file gives each pair (i, j), (j, i) once"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", "file ends after 3 of 4 entries"},
      {"%%MatrixMarket matrix array real general\n2 1\n1 2\n", ":3: unexpected text after the value"},
      {"%%MatrixMarket matrix array real symmetric\n2 3\n", ":2: a symmetric matrix must be square"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 3 1\n", ":2: a symmetric matrix must be square"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 2 1\n3 1 1\n", "a skew-symmetric matrix must be square"},
      {banner + "-2 2 1\n", "negative size"},
  };
  for (const Case& c : cases) {
    const std::string message = read_error(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos) << "input:\n" << c.text << "\nmessage: " << message;
    EXPECT_NE(message.find("bad.mtx"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

// A coordinate vector gives each row once, as a matrix gives each entry once.
// A leading '+' is a sign, as C's strtod and scipy read it.
TEST(MatrixMarket, ALeadingPlusIsASign) {
  const CsrMatrix<double> A =
      parse_matrix_market("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 +4.5e+1\n", "plus.mtx");
  EXPECT_EQ(A.val, (Array<double>{45.0}));
}

// An 'integer' file's values are whole numbers, signed either way, up to 64 bits (2^53 + 1 the nearest double).
TEST(MatrixMarket, IntegerValuesAreReadAsTheirNumbers) {
  const CsrMatrix<double> A = parse_matrix_market(
      "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 +4\n1 2 -7\n2 2 9007199254740993\n", "int.mtx");
  EXPECT_EQ(A.val, (Array<double>{4.0, -7.0, 9007199254740992.0}));
}

// A value below double's smallest is read as the nearest double, 0 or a subnormal, as C's strtod and scipy
// read it (a file written in higher precision); one above its largest is refused (above).
TEST(MatrixMarket, AValueTooSmallForADoubleIsItsNearestDouble) {
  const CsrMatrix<double> A = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1e-400\n1 2 -2e-400\n2 1 3e-324\n2 2 -1.5e-310\n",
      "tiny.mtx");
  ASSERT_EQ(A.val.size(), 4u);
  EXPECT_EQ(A.val[0], 0.0);
  EXPECT_EQ(A.val[1], 0.0);
  EXPECT_TRUE(std::signbit(A.val[1])) << "the sign is kept";
  EXPECT_EQ(A.val[2], std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(A.val[3], -1.5e-310);
}

TEST(MatrixMarket, AVectorRowGivenTwiceIsRefused) {
  try {
    (void)parse_matrix_market_vector("%%MatrixMarket matrix coordinate real general\n2 1 2\n2 1 2\n2 1 5\n", "b.mtx");
    ADD_FAILURE() << "a duplicate row was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.mtx:4: row 2 is given twice"), std::string::npos) << e.what();
  }
}

// A one-column "symmetric" file would mirror its entries outside the column: a vector is general.
TEST(MatrixMarket, AVectorIsStoredGeneral) {
  for (const char* symmetry : {"symmetric", "skew-symmetric"}) {
    const std::string text = std::string("%%MatrixMarket matrix coordinate real ") + symmetry + "\n2 1 1\n2 1 5\n";
    try {
      (void)parse_matrix_market_vector(text, "b.mtx");
      ADD_FAILURE() << symmetry << " was taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("stored 'general', this file says '") + symmetry),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(MatrixMarket, MissingFileNamesThePath) {
  const std::string message = test::error_of<InputError>([] { read_matrix_market("/nonexistent/dir/A.mtx"); });
  EXPECT_NE(message.find("/nonexistent/dir/A.mtx"), std::string::npos) << message;
}

// `text` gzip-compressed into `path` (what SuiteSparse ships as .mtx.gz).
void write_gzip(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
}

TEST(MatrixMarket, GzipFilesReadAsTheirText) {
  ScratchDir dir;
  const CsrMatrix<double> A = test::random_sparse(40, 40, 0.2, 3);
  write_matrix_market(dir.file("A.mtx"), A);
  std::ifstream in(dir.file("A.mtx"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_gzip(dir.file("A.mtx.gz"), text);
  const CsrMatrix<double> B = read_matrix_market(dir.file("A.mtx.gz"));
  EXPECT_EQ(B.row_ptr, A.row_ptr);
  EXPECT_EQ(B.col, A.col);
  EXPECT_EQ(B.val, A.val);
}

TEST(MatrixMarket, TruncatedGzipIsAReadError) {
  ScratchDir dir;
  std::string text = "%%MatrixMarket matrix coordinate real general\n300 300 300\n";
  for (int i = 1; i <= 300; ++i) text += std::to_string(i) + " " + std::to_string(i) + " " + std::to_string(i) + "\n";
  write_gzip(dir.file("full.mtx.gz"), text);
  std::ifstream in(dir.file("full.mtx.gz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.file("cut.mtx.gz"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    read_matrix_market(dir.file("cut.mtx.gz"));
    FAIL() << "a truncated .gz was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.mtx.gz"), std::string::npos) << e.what();
  }
}

// A file is streamed a few MiB at a time: a matrix whose text spans several blocks (lines cut at every
// block boundary, plain and gzip) reads as the text parsed whole, an error past the first block names its
// line, and MatrixMarketReader's batches, put together, are the matrix.
TEST(MatrixMarket, FilesLargerThanTheReadBlockStreamThrough) {
  ScratchDir dir;
  std::vector<Triplet<double>> entries;  // 20,000 rows of 16 hashed columns: about 11 MB of text
  for (Index i = 0; i < 20000; ++i)
    for (std::uint64_t k = 0; k < 16; ++k) {
      const std::uint64_t h = seeded_hash(17, static_cast<std::uint64_t>(i) * 16 + k);
      entries.push_back({i, static_cast<Index>(h % 20000), seeded_uniform(3, h) - 0.5});
    }
  const CsrMatrix<double> A = csr_from_triplets(20000, 20000, std::move(entries));
  write_matrix_market(dir.file("big.mtx"), A);
  std::ifstream in(dir.file("big.mtx"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 2u * (std::size_t{4} << 20));
  write_gzip(dir.file("big.mtx.gz"), text);
  for (const char* name : {"big.mtx", "big.mtx.gz"}) {
    const CsrMatrix<double> B = read_matrix_market(dir.file(name));
    EXPECT_EQ(B.row_ptr, A.row_ptr) << name;
    EXPECT_EQ(B.col, A.col) << name;
    EXPECT_EQ(B.val, A.val) << name;
  }
  MatrixMarketReader reader(dir.file("big.mtx.gz"));
  EXPECT_EQ(reader.header().entries, A.nnz());
  std::vector<Triplet<double>> all, batch;
  int batches = 0;
  for (bool more = true; more; ++batches) {
    batch.clear();
    more = reader.next_batch(batch, 100000);
    EXPECT_LE(batch.size(), 100000u);
    all.insert(all.end(), batch.begin(), batch.end());
  }
  EXPECT_GT(batches, 2);
  const CsrMatrix<double> C = csr_from_triplets(A.rows, A.cols, std::move(all));
  EXPECT_EQ(C.col, A.col);
  EXPECT_EQ(C.val, A.val);
  // A bad value on the last line, in the last block: named by its line number.
  std::string bad = text;
  bad.resize(bad.rfind(' ') + 1);
  bad += "oops\n";
  const long lines = static_cast<long>(std::count(bad.begin(), bad.end(), '\n'));
  write_gzip(dir.file("bad.mtx.gz"), bad);
  try {
    read_matrix_market(dir.file("bad.mtx.gz"));
    FAIL() << "the bad value was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.mtx.gz:" + std::to_string(lines) + ": expected a numeric value"),
              std::string::npos)
        << e.what();
  }
}

// A line is read to its end only up to 1 MiB: a small .gz of blanks without a newline (gigabytes once
// inflated) is refused at that line, not held in memory whole. A comment line of almost 1 MiB still reads.
TEST(MatrixMarket, ALineLongerThanAnyMatrixMarketLineIsRefusedByItsNumber) {
  ScratchDir dir;
  const std::string head = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2.0";
  write_gzip(dir.file("long.mtx.gz"), head + std::string(std::size_t{24} << 20, ' ') + "\n2 2 1.0\n");
  try {
    read_matrix_market(dir.file("long.mtx.gz"));
    FAIL() << "a 24 MiB line was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("long.mtx.gz:3: a line longer than 1 MiB"), std::string::npos) << e.what();
  }
  write_gzip(dir.file("comment.mtx.gz"), "%%MatrixMarket matrix coordinate real general\n%" +
                                             std::string((std::size_t{1} << 20) - 100, 'c') +
                                             "\n2 2 2\n1 1 2.0\n2 2 1.0\n");
  EXPECT_EQ(read_matrix_market(dir.file("comment.mtx.gz")).nnz(), 2);
}

TEST(MatrixMarket, ByteOrderMarkBeforeTheBannerIsSkipped) {
  ScratchDir dir;
  const std::string path =
      write_text(dir, "bom.mtx", "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 4\n");
  const CsrMatrix<double> A = read_matrix_market(path);
  EXPECT_EQ(A.rows, 2);
  EXPECT_EQ(A.nnz(), 1);
  EXPECT_EQ(A.val[0], 4.0);
}

TEST(MatrixMarket, DirectoryIsNamedAsOne) {
  ScratchDir dir;
  try {
    read_matrix_market(dir.path().string());
    FAIL() << "a directory was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

// A device never ends, a pipe can be read once (the program reads a header first), a FIFO without a writer
// never opens: each refused by name before it is opened, never waited on.
TEST(MatrixMarket, DevicesAndPipesAreRefusedByName) {
  ScratchDir dir;
  const std::string fifo = dir.file("matrix.mtx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto message = [](const std::string& path) {
    return test::error_of<InputError>([&] { read_matrix_market_header(path); });
  };
  EXPECT_NE(message(fifo).find(fifo + " is a pipe, not a file"), std::string::npos) << message(fifo);
  EXPECT_NE(message("/dev/zero").find("/dev/zero is a device, not a file"), std::string::npos) << message("/dev/zero");
}

TEST(MatrixMarket, FailedWriteLeavesNoFile) {
  ScratchDir dir;
  EXPECT_THROW(write_matrix_market(dir.file("missing-dir/a.mtx"), test::random_sparse(3, 3, 0.5, 1)), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing-dir")));
}

}  // namespace
}  // namespace amgsolve

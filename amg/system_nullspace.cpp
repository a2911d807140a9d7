#include "amg/system_nullspace.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

#include "amg/nullspace.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/unit_scale.hpp"

namespace amgsolve {
namespace {

// The row of A (a rank's rows: global numbers from rows.first_row()) where A maps the vector n (one value per
// column) furthest from zero, relative to the row's magnitude sum_j |a_ij| |n_j| (rows of zero magnitude
// count as zero), and that ratio; over the ranks, the worst of theirs.
WorstRow worst_row(const CsrMatrix<double>& A, const Vector<double>& n, const SystemRows& rows) {
  WorstRow worst;
  for (Index i = 0; i < A.rows; ++i) {
    double image = 0.0, magnitude = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      image += A.val[k] * n[A.col[k]];
      magnitude += std::abs(A.val[k] * n[A.col[k]]);
    }
    const double relative = magnitude > 0 ? std::abs(image) / magnitude : 0.0;
    if (worst.row < 0 || relative > worst.relative) worst = {rows.first_row() + i, relative};
  }
  return rows.worst(worst);
}

// B c, one value per row (of B's rows: over A's columns where B holds those).
Vector<double> combined(const NearNullspace& B, const double* c) {
  const auto n = static_cast<Index>(B.values.size() / static_cast<std::size_t>(B.vectors));
  Vector<double> v(static_cast<std::size_t>(n), 0.0);
  for (Index i = 0; i < n; ++i)
    for (int w = 0; w < B.vectors; ++w) v[i] += B.values[static_cast<std::size_t>(i) * B.vectors + w] * c[w];
  return v;
}

// The largest row sum of |A| over the ranks: a bound of ||A||_2 for a symmetric A, the scale of A B's norms.
double largest_row_magnitude(const CsrMatrix<double>& A, const SystemRows& rows) {
  double largest = 0.0;
  for (Index i = 0; i < A.rows; ++i) {
    double magnitude = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) magnitude += std::abs(A.val[k]);
    largest = std::max(largest, magnitude);
  }
  return rows.max(largest);
}

// Powers of two that scale B's vectors (each by its largest entry over the ranks) and their images A b (by A's
// largest row magnitude too) to about 1 before their products are summed: exact, so that the Gram matrices of
// vectors from 1e-300 to 1e300 long, or of a matrix of such a scale, neither overflow nor vanish. A vector
// that is zero on every row is an InputError.
struct Scales {
  std::vector<double> of_vectors;
  double matrix = 0.0;     // A's largest row magnitude (largest_row_magnitude)
  double of_images = 1.0;  // about 1 / matrix
};
Scales scales(const NearNullspace& B, const CsrMatrix<double>* A, const SystemRows& rows) {
  std::vector<double> largest = largest_entries(B.values, B.vectors);
  for (double& l : largest) l = rows.max(l);  // of every rank's rows
  if (const std::string problem = zero_vector_problem(largest); !problem.empty()) throw InputError(problem);
  Scales s;
  for (const double l : largest) s.of_vectors.push_back(unit_scale(l));
  if (A) {
    s.matrix = largest_row_magnitude(*A, rows);
    s.of_images = unit_scale(s.matrix);
  }
  return s;
}

// Row i of (s A) (B S), s = scale.of_images and S = diag(scale.of_vectors): each entry scaled before it is
// multiplied, so that no product of a tiny matrix and tiny vectors underflows (nor of huge ones overflows).
void scaled_product_row(const CsrMatrix<double>& A, Index i, const NearNullspace& B, const Scales& scale, double* out) {
  const auto k = static_cast<std::size_t>(B.vectors);
  std::fill(out, out + k, 0.0);
  for (Offset e = A.row_begin(i); e < A.row_end(i); ++e) {
    const double a = A.val[e] * scale.of_images;
    const double* b = B.values.data() + static_cast<std::size_t>(A.col[e]) * k;
    for (std::size_t v = 0; v < k; ++v) out[v] += a * (b[v] * scale.of_vectors[v]);
  }
}

// B^T B, and with A given (A B)^T (A B) too (k x k, the lower triangles filled), of B's vectors and images
// scaled by `scale`, summed in B's reduction blocks (each block's rows in order, the blocks' sums exactly) and
// over the ranks. B_columns: B over A's columns (SystemRows::columns).
struct Grams {
  Eigen::MatrixXd of_vectors, of_images;
};
Grams gram_matrices(const NearNullspace& B, const CsrMatrix<double>* A, const NearNullspace& B_columns,
                    const SystemRows& rows, const Scales& scale) {
  const int k = B.vectors;
  const auto entries = static_cast<std::size_t>(k) * (k + 1) / 2;
  const auto blocks = static_cast<std::int64_t>(B.reduction_blocks.size()) - 1;
  // Per block, the lower triangles' entries of both, row by row: [vectors..., images...].
  std::vector<double> partial(static_cast<std::size_t>(std::max<std::int64_t>(blocks, 0)) * 2 * entries, 0.0);
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 1)
  for (std::int64_t block = 0; block < blocks; ++block) {
    double* of_vectors = partial.data() + static_cast<std::size_t>(block) * 2 * entries;
    double* of_images = of_vectors + entries;
    std::vector<double> image(static_cast<std::size_t>(k), 0.0), b(static_cast<std::size_t>(k));
    const Index first = B.node_ptr[B.reduction_blocks[block]], last = B.node_ptr[B.reduction_blocks[block + 1]];
    for (Index i = first; i < last; ++i) {
      if (A) scaled_product_row(*A, i, B_columns, scale, image.data());
      for (int v = 0; v < k; ++v) b[v] = B.values[static_cast<std::size_t>(i) * k + v] * scale.of_vectors[v];
      std::size_t e = 0;
      for (int v = 0; v < k; ++v)
        for (int w = 0; w <= v; ++w, ++e) {
          of_vectors[e] += b[v] * b[w];
          of_images[e] += image[v] * image[w];
        }
    }
  }
  Grams g{Eigen::MatrixXd::Zero(k, k), Eigen::MatrixXd::Zero(k, k)};
  std::size_t e = 0;
  for (int v = 0; v < k; ++v)
    for (int w = 0; w <= v; ++w, ++e) {
      ExactSum vectors, images;
      for (std::int64_t block = 0; block < blocks; ++block) {
        vectors.add(partial[static_cast<std::size_t>(block) * 2 * entries + e]);
        images.add(partial[static_cast<std::size_t>(block) * 2 * entries + entries + e]);
      }
      g.of_vectors(v, w) = rows.sum(vectors);
      if (A) g.of_images(v, w) = rows.sum(images);
    }
  return g;
}

// W = V_r Lambda_r^-1/2 over B^T B's eigenvalues above rounding: B W has orthonormal columns, spanning what B
// spans (dependent vectors of B left out). `gram` is of the scaled vectors B S (S = diag(scale.of_vectors)), so
// B (S W) is orthonormal: see with_vector_scales.
Eigen::MatrixXd orthonormalizing(const Eigen::MatrixXd& gram) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> of_gram(gram.selfadjointView<Eigen::Lower>());
  const double largest = of_gram.eigenvalues().maxCoeff();
  std::vector<Eigen::Index> kept;
  for (Eigen::Index j = 0; j < gram.rows(); ++j)
    if (largest > 0 && of_gram.eigenvalues()[j] > 1e-12 * largest) kept.push_back(j);
  Eigen::MatrixXd W(gram.rows(), static_cast<Eigen::Index>(kept.size()));
  for (std::size_t j = 0; j < kept.size(); ++j)
    W.col(static_cast<Eigen::Index>(j)) = of_gram.eigenvectors().col(kept[j]) / std::sqrt(of_gram.eigenvalues()[kept[j]]);
  return W;
}

std::vector<double> columns_of(const Eigen::MatrixXd& M) { return std::vector<double>(M.data(), M.data() + M.size()); }

// S W: combinations of B from combinations W of the scaled vectors B S.
Eigen::MatrixXd with_vector_scales(const Scales& scale, Eigen::MatrixXd W) {
  for (Eigen::Index v = 0; v < W.rows(); ++v) W.row(v) *= scale.of_vectors[static_cast<std::size_t>(v)];
  return W;
}

// `auto`: the combinations of B that A maps to zero (see the header), as the columns of a k x m matrix.
std::vector<double> combinations_in_nullspace(const CsrMatrix<double>& A, const NearNullspace& B,
                                              const NearNullspace& B_columns, const SystemRows& rows) {
  const Scales scale = scales(B, &A, rows);
  const Grams grams = gram_matrices(B, &A, B_columns, rows, scale);
  // In the scaled units: B S W orthonormal, M = (A B S W)^T (A B S W) / ||A||^2 with ||A|| the largest row
  // magnitude (up to the power of two's rounding, undone in the threshold).
  const Eigen::MatrixXd W = orthonormalizing(grams.of_vectors);
  const Eigen::MatrixXd M = W.transpose() * grams.of_images.selfadjointView<Eigen::Lower>() * W;
  Eigen::MatrixXd kept(B.vectors, 0);
  if (M.rows() == 0) return {};
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> of_image(M);
  const double threshold = kNullspaceCandidate * scale.matrix * scale.of_images;
  for (Eigen::Index j = 0; j < M.rows(); ++j) {
    if (std::sqrt(std::max(of_image.eigenvalues()[j], 0.0)) > threshold) continue;
    const Eigen::VectorXd c = with_vector_scales(scale, W * of_image.eigenvectors().col(j));
    if (const WorstRow worst = worst_row(A, combined(B_columns, c.data()), rows); worst.relative > kNullspaceRowTolerance)
      throw InputError("A maps a combination of the near-nullspace vectors nearly, not quite, to zero (row " +
                       std::to_string(worst.row + 1) + ": " + format_number(worst.relative) +
                       " of its magnitude): a structure free to move whose vectors or coordinates are not the ones "
                       "the matrix was assembled on? Give them to full precision, or amg.nullspace: none where it "
                       "is held (by a very soft support)");
    kept.conservativeResize(Eigen::NoChange, kept.cols() + 1);
    kept.col(kept.cols() - 1) = c;
  }
  return columns_of(kept);
}

// `near_nullspace`: all of B, checked vector by vector; the combinations an orthonormal basis of its span.
std::vector<double> declared_nullspace(const CsrMatrix<double>& A, const NearNullspace& B,
                                       const NearNullspace& B_columns, const SystemRows& rows) {
  const int k = B.vectors;
  for (int v = 0; v < k; ++v) {
    Eigen::VectorXd unit = Eigen::VectorXd::Unit(k, v);
    const WorstRow worst = worst_row(A, combined(B_columns, unit.data()), rows);
    if (worst.relative > kNullspaceRowTolerance)
      throw InputError("amg.nullspace is near_nullspace, but A does not map near-nullspace vector " +
                       std::to_string(v + 1) + " to zero: row " + std::to_string(worst.row + 1) + " of A times it is " +
                       format_number(worst.relative) + " of the row's magnitude (use auto, or none for a nonsingular matrix)");
  }
  const Scales scale = scales(B, nullptr, rows);
  return columns_of(with_vector_scales(scale, orthonormalizing(gram_matrices(B, nullptr, B_columns, rows, scale).of_vectors)));
}

}  // namespace

Index SystemRows::connected_components(const CsrMatrix<double>& A, const Array<Index>& node_ptr) const {
  return amgsolve::connected_components(A, &node_ptr);
}

SystemNullspace resolve_system_nullspace(const CsrMatrix<double>& A, const NearNullspace& B, NullspaceChoice choice,
                                         const SystemRows& rows) {
  require_system_nullspace_choice(choice);
  // (Every rank decides alike: the count of all ranks' rows, the sums over them.)
  if (choice == NullspaceChoice::none || rows.max(static_cast<double>(A.rows)) == 0) return {};
  NearNullspace scratch;
  const NearNullspace& B_columns = rows.columns(B, scratch);
  std::vector<double> combinations = choice == NullspaceChoice::near_nullspace
                                         ? declared_nullspace(A, B, B_columns, rows)
                                         : combinations_in_nullspace(A, B, B_columns, rows);
  if (combinations.empty()) return {};
  // Parts of nodes: a node's unknowns move together whatever couples them (a block-diagonal system of two
  // decoupled fields is one part, its nullspace each field's modes, which the combinations hold).
  if (const Index parts = rows.connected_components(A, B.node_ptr); parts > 1)
    throw InputError("the matrix is singular (A maps " + std::to_string(combinations.size() / B.vectors) +
                     " combinations of the near-nullspace vectors to zero: a structure free to move) and its graph "
                     "falls into " + std::to_string(parts) + " disconnected parts, each free on its own: solve the "
                     "parts separately");
  return {NullspaceChoice::near_nullspace, std::make_shared<const std::vector<double>>(std::move(combinations))};
}

void resolve_system_nullspace(const CsrMatrix<double>& A, AmgParams& params) {
  const SystemNullspace resolved = resolve_system_nullspace(
      A, finest_near_nullspace(A.rows, params.block_size, params.near_nullspace), params.nullspace);
  params.nullspace = resolved.choice;
  params.nullspace_combinations = resolved.combinations;
}

Vector<double> nullspace_vectors(const NearNullspace& B, const std::vector<double>& combinations) {
  const std::size_t k = static_cast<std::size_t>(B.vectors), m = combinations.size() / k;
  const auto n = static_cast<std::size_t>(B.rows());
  Vector<double> N(n * m);
  for (std::size_t j = 0; j < m; ++j) {
    const Vector<double> column = combined(B, combinations.data() + j * k);
    std::copy(column.begin(), column.end(), N.begin() + static_cast<std::ptrdiff_t>(j * n));
  }
  return N;
}

namespace {

// The cpu backend's deterministic dot product.
double cpu_dot(const Vector<double>& a, const Vector<double>& b) { return CpuBackend{}.dot(a, b); }

// v -= s q
void subtract(double s, const Vector<double>& q, Vector<double>& v) {
#pragma omp parallel for schedule(static) if (worth_a_team(v.size()))
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i) v[i] -= s * q[i];
}

}  // namespace

NullspaceProjection::NullspaceProjection(const NearNullspace& B, const std::vector<double>& combinations, Dot dot)
    : dot_(dot ? std::move(dot) : Dot(cpu_dot)) {
  const std::size_t k = static_cast<std::size_t>(B.vectors);
  for (std::size_t j = 0; j < combinations.size() / k; ++j) {
    Vector<double> q = combined(B, combinations.data() + j * k);
    for (int pass = 0; pass < 2; ++pass)  // modified Gram-Schmidt, twice
      for (const Vector<double>& earlier : basis_) subtract(dot_(earlier, q), earlier, q);
    const double norm = std::sqrt(dot_(q, q));
    if (norm == 0.0) continue;  // the combinations are independent (orthonormalizing): never, but no NaN
    for (double& value : q) value /= norm;
    basis_.push_back(std::move(q));
  }
}

double NullspaceProjection::part(const Vector<double>& v) const {
  const double norm = std::sqrt(dot_(v, v));
  if (norm == 0.0) return 0.0;
  double along = 0.0;
  for (const Vector<double>& q : basis_) {
    const double component = dot_(q, v);
    along += component * component;
  }
  return std::sqrt(along) / norm;
}

void NullspaceProjection::project(Vector<double>& v) const {
  for (const Vector<double>& q : basis_) subtract(dot_(q, v), q, v);
}

double NullspaceProjection::outside(Vector<double> v) const {
  const double norm = std::sqrt(dot_(v, v));
  if (norm == 0.0) return 0.0;
  project(v);
  return std::sqrt(dot_(v, v)) / norm;
}

void require_consistent_rhs(double part, int vectors, double tolerance, const std::string& what) {
  if (part <= tolerance) return;
  throw InputError(what + " is inconsistent with the singular matrix: A maps " + std::to_string(vectors) +
                   " combinations of the near-nullspace vectors to zero (motions the structure is free to make), "
                   "so every A x is orthogonal to them, but b's part along them is " + format_number(part) +
                   " of ||b||, above the solve's tolerance " + format_number(tolerance) +
                   ": remove it (loads in equilibrium, with no net force or moment), the only case in which A x = b "
                   "has a solution");
}

}  // namespace amgsolve

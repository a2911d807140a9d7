#include "app/near_nullspace_input.hpp"

#include <array>
#include <memory>
#include <string>

#include "amg/near_nullspace.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/nullspace.hpp"
#include "app/problem_input.hpp"
#include "app/ranks.hpp"
#include "common/error.hpp"
#include "common/memory.hpp"
#include "problems/elasticity.hpp"
#include "sparse/matrix_market.hpp"

namespace amgsolve {
namespace {

// A Matrix Market file's entries as a dense matrix, row by row (entries not stored are 0).
Vector<double> dense_rows(const CsrMatrix<double>& M) {
  Vector<double> dense(static_cast<std::size_t>(M.rows) * static_cast<std::size_t>(M.cols), 0.0);
  for (Index i = 0; i < M.rows; ++i)
    for (Offset k = M.row_begin(i); k < M.row_end(i); ++k)
      dense[static_cast<std::size_t>(i) * M.cols + M.col[k]] = M.val[k];
  return dense;
}

// The elasticity problem's rigid-body modes, of all its nodes (rows_rigid_body_modes: of this rank's).
NearNullspaceVectors whole_rigid_body_modes(const ElasticityParams& body) {
  require_memory(elasticity_near_nullspace_bytes(body), "the elasticity problem's rigid-body modes (problem.box)");
  return rigid_body_modes(elasticity_coordinates(body), body.dimensions(), body.dimensions());
}

// The rigid-body modes of this rank's nodes (`mine`, their coordinates, checked) about the centroid of all
// `nodes` nodes: the coordinates' exact sums over the ranks, so the same modes as one process's rows of
// them. Collective.
NearNullspaceVectors rows_rigid_body_modes(const Vector<double>& mine, int d, int block_size, std::int64_t nodes) {
  const std::array<ExactSum, 3> partial = coordinate_sums(mine, d);
  std::array<double, 3> sums{};
  for (std::size_t a = 0; a < 3; ++a) sums[a] = Ranks::sum(partial[a]);
  const std::array<double, 3> centre = centroid(sums, nodes);
  NearNullspaceVectors modes;
  collectively([&] { modes = rigid_body_modes(mine, d, block_size, centre); });
  return modes;
}

NearNullspaceVectors rows_rigid_body_modes(const Config& config, const ElasticityParams& body) {
  const int d = body.dimensions();
  const RowRange rows = generated_rows(config.problem);
  const std::int64_t first_node = rows.first / d, last_node = rows.last / d;
  Vector<double> mine;
  collectively([&] {  // running out of memory is every rank's error, before the sums
    require_memory(elasticity_near_nullspace_bytes(body, last_node - first_node),
                   "the elasticity problem's rigid-body modes (problem.box)");
    mine = elasticity_coordinates(body, first_node, last_node);
  });
  return rows_rigid_body_modes(mine, d, d, elasticity_rows(body) / d);
}

// problem.near_nullspace or problem.coordinates read whole: the vectors or the nodes' points row by row, their
// count or dimension, checked against the matrix's rows (from its file's header) and the points as rigid-body
// input; amg.block_size set to the points' dimension where it is 1.
struct NearNullspaceFile {
  Vector<double> values;
  int columns = 0;
  std::int64_t matrix_rows = 0;
};

NearNullspaceFile read_near_nullspace_file(Config& config) {
  const MatrixMarketParams& p = config.problem.matrix_market;
  const std::int64_t rows = matrix_file_rows(p);
  if (!p.near_nullspace.empty()) {
    const CsrMatrix<double> B = read_matrix_market(p.near_nullspace);
    if (B.cols < 1 || B.cols > kMaxNearNullspaceVectors)
      throw InputError("problem.near_nullspace: " + p.near_nullspace + " has " + std::to_string(B.cols) +
                       " columns; 1 to " + std::to_string(kMaxNearNullspaceVectors) + " vectors are needed");
    if (B.rows != rows)
      throw InputError("problem.near_nullspace: " + p.near_nullspace + " has " + std::to_string(B.rows) +
                       " rows, the matrix " + std::to_string(rows));
    Vector<double> vectors = dense_rows(B);
    if (const std::string problem = zero_vector_problem(largest_entries(vectors, B.cols)); !problem.empty())
      throw InputError("problem.near_nullspace: " + p.near_nullspace + ": " + problem);
    return {std::move(vectors), B.cols, rows};
  }
  const CsrMatrix<double> points = read_matrix_market(p.coordinates);
  if (points.cols != 2 && points.cols != 3)
    throw InputError("problem.coordinates: " + p.coordinates + " has " + std::to_string(points.cols) +
                     " columns; the nodes' coordinates in 2 or 3 dimensions are needed");
  if (config.amg.block_size == 1) config.amg.block_size = points.cols;
  NearNullspaceFile file{dense_rows(points), points.cols, rows};
  try {
    require_rigid_body_input(file.values, file.columns, config.amg.block_size);
    if (const std::string flat = vanishing_rotation_problem(file.values, file.columns, config.amg.block_size);
        !flat.empty())
      throw InputError(flat);
  } catch (const InputError& e) {
    throw InputError("problem.coordinates: " + p.coordinates + ": " + e.what());
  }
  if (static_cast<std::int64_t>(points.rows) * config.amg.block_size != rows)
    throw InputError("problem.coordinates: " + p.coordinates + " has " + std::to_string(points.rows) + " nodes of " +
                     std::to_string(config.amg.block_size) + " unknowns, but the matrix has " + std::to_string(rows) +
                     " rows");
  return file;
}

// A Matrix Market problem's near-nullspace from its file, as the setup takes it: whole on every rank, or (by
// rows) read on rank 0, checked there and dealt out, each rank given its rows of the vectors, or its nodes'
// points and then their rigid-body modes about the centroid of all nodes. Collective.
NearNullspaceVectors near_nullspace_of_file(Config& config, bool by_rows) {
  const MatrixMarketParams& p = config.problem.matrix_market;
  const bool points = !p.coordinates.empty();
  NearNullspaceFile file;
  if (!by_rows) {
    file = read_near_nullspace_file(config);
    if (points) return rigid_body_modes(file.values, file.columns, config.amg.block_size);
    return {file.columns, std::make_shared<const Vector<double>>(std::move(file.values))};
  }
  collectively([&] {
    if (Ranks::prints()) file = read_near_nullspace_file(config);
  });
  // Rank 0's counts, on every rank (the others add zero).
  file.columns = static_cast<int>(Ranks::sum(std::int64_t{file.columns}));
  file.matrix_rows = Ranks::sum(file.matrix_rows);
  config.amg.block_size = static_cast<int>(Ranks::sum(std::int64_t{Ranks::prints() ? config.amg.block_size : 0}));
  const int block = config.amg.block_size;
  const auto [first, last] = owned_rows(file.matrix_rows, block);
  const std::int64_t rows = last - first, file_rows = points ? rows / block : rows;
  const std::string& name = points ? p.coordinates : p.near_nullspace;
  collectively([&] {
    if (Ranks::prints()) return;
    require_memory(sizeof(double) * static_cast<std::uint64_t>(file_rows * file.columns), "the rows of " + name);
    file.values.resize(static_cast<std::size_t>(file_rows * file.columns));
  });
  scatter_from_first(file.values);
  if (!points) return {file.columns, std::make_shared<const Vector<double>>(std::move(file.values))};
  collectively([&] {
    const int modes = file.columns == 2 ? 3 : 6;
    require_memory(sizeof(double) * static_cast<std::uint64_t>(rows * modes),
                   "the rigid-body modes of the points in " + name);
  });
  return rows_rigid_body_modes(file.values, file.columns, block, file.matrix_rows / block);
}

}  // namespace

// A system's near-nullspace (problem.near_nullspace, the rigid-body modes of problem.coordinates, or those of
// the elasticity problem's nodes, with amg.block_size its dimension) into the setup's parameters, and a
// system refused where it cannot be set up, before the matrix is read or made.
void attach_near_nullspace(Config& config) {
  const MatrixMarketParams& p = config.problem.matrix_market;
  const bool files = config.problem.type == ProblemType::matrix_market && !(p.near_nullspace.empty() && p.coordinates.empty());
  const bool elasticity = config.problem.type == ProblemType::elasticity;
  if (!files && !elasticity && !config.amg.is_system()) return;
  if (!p.near_nullspace.empty() && !p.coordinates.empty())
    throw InputError("problem.near_nullspace and problem.coordinates: give one of them (the coordinates give the "
                     "rigid-body modes as the near-nullspace)");
  if (const std::string problem = system_support_problem(config.backend); !problem.empty())
    throw InputError(problem);
  if (elasticity) {  // the rigid-body modes of its nodes: all of them, or this rank's (by rows)
    const ElasticityParams& body = config.problem.elasticity;
    config.amg.block_size = body.dimensions();
    // The generated body is clamped, so nonsingular: amg.nullspace: auto would look for combinations of its
    // modes that A maps to zero, and a slender one (a box of 3000 x 1) bends so easily that its rotations come
    // near enough to be refused as "a structure free to move".
    if (config.amg.nullspace == NullspaceChoice::automatic) config.amg.nullspace = NullspaceChoice::none;
    config.amg.near_nullspace = rows_made_apart(config) ? rows_rigid_body_modes(config, body)
                                                          : whole_rigid_body_modes(body);
  } else if (files) {  // checked against the matrix file's rows before it is read
    config.amg.near_nullspace = near_nullspace_of_file(config, rows_made_apart(config));
  }
}

}  // namespace amgsolve

#pragma once
// Linear elasticity of a cantilever under its own weight (linear simplicial elements: T. J. R. Hughes, "The
// Finite Element Method", 2000; the cell's cut into simplices along each order of the axes: H. W. Kuhn,
// "Some combinatorial lemmas in topology", IBM J. Res. Dev. 4(5), 1960): a block of nx x ny (x nz) square (cubic) cells of
// side h = 1 / ny, the box [0, nx h] x [0, 1] (x [0, nz h]), clamped on its face x = 0 and loaded by a body
// force of 1 per unit volume in -y. Plane strain in 2D; each cell cut into Kuhn's simplices (2 triangles, 6
// tetrahedra: the path from the cell's first corner to its opposite one along each order of the axes),
// linear elements, an isotropic material of Young's modulus E and Poisson ratio nu (Lame's lambda =
// E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu))), whose element blocks are
//   K_ab = |T| (lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I),  g_a the gradient of corner a's shape function.
// The unknowns are the free nodes' displacements (ux, uy[, uz]), interleaved node by node, the nodes numbered
// x fastest (the VTK grid's order). Its near-nullspace is the rigid-body modes of the nodes' coordinates
// (amg/rigid_body_modes.hpp): the program sets it up as a system (problem.type elasticity).
//
// Every cell is the same, so the d! element matrices are formed once; each node's row then sums the blocks of
// the elements around it (no triplets: memory is the matrix's), rows in parallel, each in a fixed order.
#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"

namespace amgsolve {

// The material's ranges: beyond nu = 0.49 linear elements lock (at 0.5 the material is incompressible).
inline constexpr double kMaxYoungModulus = 1e10;
inline constexpr double kMaxPoissonRatio = 0.49;

struct ElasticityParams {
  std::vector<std::int64_t> cells = {48, 8, 8};  // per direction: 2 entries (plane strain) or 3
  double young_modulus = 1.0;
  double poisson_ratio = 0.3;
  int dimensions() const { return static_cast<int>(cells.size()); }
};

// Free nodes (those off the clamped face), rows (their displacements) and an upper bound of the stored entries.
std::int64_t elasticity_nodes(const ElasticityParams& p);
std::int64_t elasticity_rows(const ElasticityParams& p);
std::int64_t elasticity_nnz_bound(const ElasticityParams& p);
// What the matrix rows of `nodes` free nodes take (12 bytes an entry, 8 a row), and what the setup's
// rigid-body modes of all the nodes and their coordinates take: each checked before it is made.
std::uint64_t elasticity_matrix_bytes(const ElasticityParams& p, std::int64_t nodes);
std::uint64_t elasticity_near_nullspace_bytes(const ElasticityParams& p, std::int64_t nodes);
std::uint64_t elasticity_near_nullspace_bytes(const ElasticityParams& p);

// The free nodes' coordinates, node by node (nodes x dimensions): all of them, or those of the nodes
// [first_node, last_node) (an MPI rank's).
Vector<double> elasticity_coordinates(const ElasticityParams& p);
Vector<double> elasticity_coordinates(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node);

// The stiffness matrix's rows of the free nodes [first_node, last_node): their d unknowns each, columns
// numbered globally (A.cols is every unknown). An MPI rank's part of the cantilever, or all nodes the whole.
CsrMatrix<double> elasticity_matrix_rows(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node);
CsrMatrix<double> elasticity_matrix(const ElasticityParams& p);
// The weight's load vector: the body force lumped to the nodes, each element's volume / (d + 1) to each of
// its corners (a few table lookups a node); whole, or the rows of the nodes [first_node, last_node).
Vector<double> elasticity_load(const ElasticityParams& p);
Vector<double> elasticity_load(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node);

}  // namespace amgsolve

#include "problems/diffusion.hpp"

#include <cmath>

namespace amgsolve {

std::array<double, 3> VoxelDomain::centre(std::int64_t voxel) const {
  const std::int64_t i = voxel % size[0], j = (voxel / size[0]) % size[1], k = voxel / (std::int64_t{size[0]} * size[1]);
  return {origin[0] + (i + 0.5) * voxel_size, origin[1] + (j + 0.5) * voxel_size, origin[2] + (k + 0.5) * voxel_size};
}

std::int64_t VoxelDomain::voxel_at(const std::array<double, 3>& p) const {
  std::array<std::int64_t, 3> ijk{};
  for (int d = 0; d < 3; ++d) {
    const double t = std::floor((p[d] - origin[d]) / voxel_size);
    if (!(t >= 0 && t < size[d])) return -1;
    ijk[d] = static_cast<std::int64_t>(t);
  }
  return ijk[0] + size[0] * (ijk[1] + std::int64_t{size[1]} * ijk[2]);
}

double robin_factor(double n) {
  if (!(n >= 1.0)) throw InputError("relative refractive index must be >= 1, got " + std::to_string(n));
  const double r_eff = -1.440 / (n * n) + 0.710 / n + 0.668 + 0.0636 * n;
  // At n = 1 the fit gives 0.0016 instead of 0: clamp so that index matching means A = 1.
  const double r = std::max(r_eff, 0.0);
  return (1.0 + r) / (1.0 - r);
}

namespace {

// The six face neighbours of a voxel as (axis, step).
constexpr std::array<std::array<int, 2>, 6> kFaces = {{{2, -1}, {1, -1}, {0, -1}, {0, 1}, {1, 1}, {2, 1}}};

// Neighbour voxel across a face, or -1 beyond the box.
std::int64_t neighbour(const VoxelDomain& d, std::int64_t v, const std::array<int, 2>& face) {
  const std::int64_t stride[3] = {1, d.size[0], std::int64_t{d.size[0]} * d.size[1]};
  const std::int64_t coord[3] = {v % d.size[0], (v / d.size[0]) % d.size[1], v / stride[2]};
  const std::int64_t c = coord[face[0]] + face[1];
  if (c < 0 || c >= d.size[face[0]]) return -1;
  return v + face[1] * stride[face[0]];
}

Index neighbour_unknown(const VoxelDomain& d, std::int64_t v, const std::array<int, 2>& face) {
  const std::int64_t n = neighbour(d, v, face);
  return n < 0 ? Index{-1} : d.unknown_of_voxel[n];
}

}  // namespace

DiffusionOperator diffusion_operator(const VoxelDomain& domain, const Vector<double>& mua, const Vector<double>& musp,
                                     double robin) {
  const Index n = domain.unknowns();
  if (mua.size() != static_cast<std::size_t>(n) || musp.size() != static_cast<std::size_t>(n))
    throw Error("diffusion_operator: optical properties do not match the unknowns");
  const double h = domain.voxel_size;
  DiffusionOperator op;
  op.absorption.resize(static_cast<std::size_t>(n));
  op.boundary.resize(static_cast<std::size_t>(n));
  CsrMatrix<double>& A = op.A;
  A = CsrMatrix<double>(n, n);
#pragma omp parallel for schedule(static)
  for (Index u = 0; u < n; ++u) {
    Offset count = 1;
    for (const auto& face : kFaces) count += neighbour_unknown(domain, domain.voxel_of_unknown[u], face) >= 0 ? 1 : 0;
    A.row_ptr[static_cast<std::size_t>(u) + 1] = count;
  }
  allocate_from_row_lengths(A);

#pragma omp parallel for schedule(static)
  for (Index u = 0; u < n; ++u) {
    const std::int64_t v = domain.voxel_of_unknown[u];
    const double D = diffusion_coefficient(mua[u], musp[u]);
    double diagonal = h * h * h * mua[u], boundary = 0.0;
    Offset at = A.row_ptr[u], centre = -1;
    // kFaces is ordered by neighbour index (-z, -y, -x, +x, +y, +z), so columns come out sorted once the
    // centre is slotted in between -x and +x.
    for (std::size_t f = 0; f < kFaces.size(); ++f) {
      if (f == 3) centre = at++;
      const Index w = neighbour_unknown(domain, v, kFaces[f]);
      if (w < 0) {
        boundary += h * h / (2.0 * robin + h / (2.0 * D));
        continue;
      }
      const double Dw = diffusion_coefficient(mua[w], musp[w]);
      const double coupling = h * 2.0 * D * Dw / (D + Dw);
      diagonal += coupling;
      A.col[at] = w;
      A.val[at++] = -coupling;
    }
    A.col[centre] = u;
    A.val[centre] = diagonal + boundary;
    op.absorption[u] = h * h * h * mua[u];
    op.boundary[u] = boundary;
  }
  return op;
}

}  // namespace amgsolve

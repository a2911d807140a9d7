#include "problems/diffusion.hpp"

#include <cmath>

#include "common/thread_errors.hpp"

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

namespace {

constexpr const auto& kFaces = kFaceDirections;

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

std::array<double, 3> face_centre(const VoxelDomain& domain, Index unknown, int direction) {
  std::array<double, 3> c = domain.centre(domain.voxel_of_unknown[unknown]);
  c[kFaces[direction][0]] += 0.5 * kFaces[direction][1] * domain.voxel_size;
  return c;
}

Vector<double> DiffusionOperator::exitance(const Vector<double>& fluence) const {
  Vector<double> out(skin.size());
#pragma omp parallel for schedule(static)
  for (std::size_t f = 0; f < skin.size(); ++f) out[f] = exitance(f, fluence);
  return out;
}

namespace {

// The share of a staircase face in the true skin area: 1 / |n|_1.
double area_weight(const OutwardNormal& normal, const std::array<double, 3>& at) {
  if (!normal) return 1.0;
  const std::array<double, 3> n = normal(at);
  return 1.0 / (std::abs(n[0]) + std::abs(n[1]) + std::abs(n[2]));
}

// The boundary faces of every unknown, in order, with their true areas (conductances filled later);
// first[u] is where unknown u's faces begin.
struct SkinFaces {
  std::vector<SkinFace> faces;
  std::vector<Offset> first;
};

SkinFaces skin_faces(const VoxelDomain& domain, const OutwardNormal& normal) {
  const Index n = domain.unknowns();
  std::vector<Offset> first(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(static)
  for (Index u = 0; u < n; ++u) {
    Offset faces = 0;
    for (const auto& face : kFaces) faces += neighbour_unknown(domain, domain.voxel_of_unknown[u], face) < 0 ? 1 : 0;
    first[static_cast<std::size_t>(u) + 1] = faces;
  }
  for (std::size_t u = 0; u < static_cast<std::size_t>(n); ++u) first[u + 1] += first[u];
  std::vector<SkinFace> skin(static_cast<std::size_t>(first.back()));
  const double h2 = domain.voxel_size * domain.voxel_size;
  ThreadErrors errors;  // `normal` is the caller's function: what it throws reaches the caller
#pragma omp parallel for schedule(dynamic, 1024)
  for (Index u = 0; u < n; ++u)
    errors.run([&] {
      Offset at = first[u];
      for (int f = 0; f < 6; ++f)
        if (neighbour_unknown(domain, domain.voxel_of_unknown[u], kFaces[f]) < 0)
          skin[at++] = {u, static_cast<std::uint8_t>(f), h2 * area_weight(normal, face_centre(domain, u, f)), 0.0};
    });
  errors.rethrow();
  return {std::move(skin), std::move(first)};
}

}  // namespace

DiffusionOperator diffusion_operator(const VoxelDomain& domain, const Vector<double>& mua, const Vector<double>& musp,
                                     double robin, const OutwardNormal& normal, const RowRange* rows) {
  const Index n = domain.unknowns();
  if (mua.size() != static_cast<std::size_t>(n) || musp.size() != static_cast<std::size_t>(n))
    throw Error("diffusion_operator: optical properties do not match the unknowns");
  const double h = domain.voxel_size;
  DiffusionOperator op;
  SkinFaces skin = skin_faces(domain, normal);
  op.absorption.resize(static_cast<std::size_t>(n));
  op.boundary.resize(static_cast<std::size_t>(n));
  const RowRange own = rows ? *rows : RowRange{0, n};
  if (own.first < 0 || own.last < own.first || own.last > n)
    throw Error("diffusion_operator: rows [" + std::to_string(own.first) + ", " + std::to_string(own.last) +
                ") of " + std::to_string(n));
  CsrMatrix<double>& A = op.A;
  A = CsrMatrix<double>(static_cast<Index>(own.last - own.first), n);
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < A.rows; ++r) {
    const auto u = static_cast<Index>(own.first + r);
    Offset count = 1;
    for (const auto& face : kFaces) count += neighbour_unknown(domain, domain.voxel_of_unknown[u], face) >= 0 ? 1 : 0;
    A.row_ptr[static_cast<std::size_t>(r) + 1] = count;
  }
  allocate_from_row_lengths(A);

#pragma omp parallel for schedule(static)
  for (Index u = 0; u < n; ++u) {
    const std::int64_t v = domain.voxel_of_unknown[u];
    const double D = diffusion_coefficient(mua[u], musp[u]);
    double diagonal = h * h * h * mua[u], boundary = 0.0;
    // Every unknown's boundary conductances (the whole skin); the row itself only when it is ours.
    const bool mine = own.contains(u);
    Offset at = mine ? A.row_ptr[u - own.first] : 0, centre = -1, face = skin.first[u];
    // kFaces is ordered by neighbour index (-z, -y, -x, +x, +y, +z), so columns come out sorted once the
    // centre is slotted in between -x and +x.
    for (std::size_t f = 0; f < kFaces.size(); ++f) {
      if (f == 3) centre = at++;
      const Index w = neighbour_unknown(domain, v, kFaces[f]);
      if (w < 0) {
        SkinFace& s = skin.faces[face++];
        s.conductance = h * h / (2.0 * robin * h * h / s.area + h / (2.0 * D));
        boundary += s.conductance;
        continue;
      }
      const double Dw = diffusion_coefficient(mua[w], musp[w]);
      const double coupling = h * 2.0 * D * Dw / (D + Dw);
      diagonal += coupling;
      if (!mine) continue;
      A.col[at] = w;
      A.val[at++] = -coupling;
    }
    if (mine) {
      A.col[centre] = u;
      A.val[centre] = diagonal + boundary;
    }
    op.absorption[u] = h * h * h * mua[u];
    op.boundary[u] = boundary;
  }
  op.skin = std::move(skin.faces);
  return op;
}

}  // namespace amgsolve

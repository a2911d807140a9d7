// See combblas_baseline.hpp.
#include "bench/combblas_baseline.hpp"

#include <CombBLAS/CombBLAS.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace amgsolve {
namespace {

using Local = combblas::SpDCCols<std::int64_t, double>;
using Distributed = combblas::SpParMat<std::int64_t, double, Local>;
using Triples = combblas::FullyDistVec<std::int64_t, std::int64_t>;
using Values = combblas::FullyDistVec<std::int64_t, double>;

// CombBLAS's matlab-style constructor: each rank fills its own share of the triple vectors (the vectors'
// block distribution), and CombBLAS sends every triple to the rank of its 2D block. The vectors are filled
// element by element because their constructor from unequal local pieces mishandles the values in 1.6.
Distributed to_combblas(const CsrMatrix<double>& M, const std::shared_ptr<combblas::CommGrid>& grid) {
  const std::int64_t nnz = M.nnz();
  Triples rows(grid, nnz, 0), cols(grid, nnz, 0);
  Values values(grid, nnz, 0.0);
  const std::int64_t first = rows.LengthUntil(), count = rows.MyLocLength();
  std::int64_t row = static_cast<std::int64_t>(std::upper_bound(M.row_ptr.begin(), M.row_ptr.end(), first) -
                                               M.row_ptr.begin()) - 1;
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t entry = first + k;
    while (M.row_ptr[row + 1] <= entry) ++row;
    rows.SetLocalElement(k, row);
    cols.SetLocalElement(k, M.col[entry]);
    values.SetLocalElement(k, M.val[entry]);
  }
  return Distributed(M.rows, M.cols, rows, cols, values);
}

double value_sum(Distributed& C) {
  const combblas::SpTuples<std::int64_t, double> mine(C.seq());
  double local = 0, total = 0;
  for (std::int64_t k = 0; k < mine.getnnz(); ++k) local += mine.numvalue(k);
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

}  // namespace

bool combblas_fits(int ranks) {
  const int q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks))));
  return q * q == ranks;
}

CombblasProduct combblas_multiply(const CsrMatrix<double>& A, const CsrMatrix<double>& B, int runs) {
  const auto grid = std::make_shared<combblas::CommGrid>(MPI_COMM_WORLD, 0, 0);
  Distributed left = to_combblas(A, grid), right = to_combblas(B, grid);
  using Semiring = combblas::PlusTimesSRing<double, double>;
  Distributed C = combblas::Mult_AnXBn_Synch<Semiring, double, Local>(left, right);
  std::vector<double> seconds;
  for (int run = 0; run < runs; ++run) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    C = combblas::Mult_AnXBn_Synch<Semiring, double, Local>(left, right);
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    seconds.push_back(elapsed);
  }
  std::sort(seconds.begin(), seconds.end());
  CombblasProduct product;
  product.seconds = seconds[seconds.size() / 2];
  product.nnz = C.getnnz();
  product.value_sum = value_sum(C);
  product.grid = std::to_string(grid->GetGridRows()) + "x" + std::to_string(grid->GetGridCols());
  return product;
}

}  // namespace amgsolve

// CombBLAS (Buluc and Gilbert's Combinatorial BLAS 1.6, Debian libcombblas-dev) as the in-run baseline of the
// distributed products in mpi-spgemm-bench: its Sparse SUMMA (Mult_AnXBn_Synch) on a square process grid, the
// 2D algorithm Azad et al. 2016 measure Split-3D against (section 5). Kept in its own translation unit so
// that CombBLAS's headers reach nothing else.
#pragma once

#include <cstdint>
#include <string>

#include "sparse/csr.hpp"

namespace amgsolve {

struct CombblasProduct {
  double seconds = 0;        // median over the runs of the slowest rank's multiply (operands already on the grid)
  std::int64_t nnz = 0;      // of C
  double value_sum = 0;      // of C's values, summed over every rank: a check against our product
  std::string grid;          // "q x q"
};

// Whether CombBLAS 1.6 runs on `ranks` processes (it needs a square grid).
bool combblas_fits(int ranks);

// A * B with CombBLAS on MPI_COMM_WORLD (collective; every rank holds the whole A and B and hands CombBLAS
// its share of the triples). `runs` timed multiplies after one untimed.
CombblasProduct combblas_multiply(const CsrMatrix<double>& A, const CsrMatrix<double>& B, int runs);

}  // namespace amgsolve

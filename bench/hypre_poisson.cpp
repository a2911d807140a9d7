// hypre's BoomerAMG inside hypre's PCG on the problem of configs/poisson.yaml (7-point Poisson on n^3
// unknowns, Dirichlet boundary eliminated, b = 1, x0 = 0, relative residual 1e-8), distributed by rows over
// the MPI ranks as amgsolve distributes it: the in-run baseline of the distributed solve
// (bench/mpi-poisson.py). Each rank assembles only its rows (HYPRE_IJMatrix). The BoomerAMG settings are
// the ones hypre's documentation recommends for 3D diffusion: HMIS coarsening, extended+i interpolation
// with at most 4 entries a row, strength threshold 0.25, one l1-scaled symmetric hybrid Gauss-Seidel sweep
// before and after, one V-cycle per PCG iteration.
//
//   mpirun -np R build/bench/hypre-poisson [n]
//   RESULT ranks=R n=... setup=... solve=... total=... iters=... relres=...
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The 7-point stencil of row (x, y, z) of an n^3 grid: 6 on the diagonal, -1 to each neighbour inside.
void stencil_row(HYPRE_BigInt row, HYPRE_BigInt n, std::vector<HYPRE_BigInt>& cols, std::vector<double>& vals) {
  cols.clear(), vals.clear();
  const HYPRE_BigInt x = row % n, y = row / n % n, z = row / (n * n);
  const auto add = [&](HYPRE_BigInt c, double v) { cols.push_back(c), vals.push_back(v); };
  if (z > 0) add(row - n * n, -1.0);
  if (y > 0) add(row - n, -1.0);
  if (x > 0) add(row - 1, -1.0);
  add(row, 6.0);
  if (x + 1 < n) add(row + 1, -1.0);
  if (y + 1 < n) add(row + n, -1.0);
  if (z + 1 < n) add(row + n * n, -1.0);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  HYPRE_Init();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string argument = argc > 1 ? argv[1] : "128";
  if (argument == "--help" || argument == "-h") {
    if (rank == 0) std::printf("usage: mpirun -np R hypre-poisson [n]\n  hypre's BoomerAMG in PCG on 7-point Poisson n^3 "
                               "(default 128), b = 1, to 1e-8; prints one RESULT line\n");
    HYPRE_Finalize();
    MPI_Finalize();
    return 0;
  }
  char* rest = nullptr;
  const HYPRE_BigInt n = std::strtoll(argument.c_str(), &rest, 10);
  if (argc > 2 || *rest != '\0' || n < 2 || n > 1290) {  // 1290^3 is within 32-bit row numbers
    if (rank == 0 && argc > 2)
      std::fprintf(stderr, "hypre-poisson: error: one argument (n), got %d: '%s' is too many\n", argc - 1, argv[2]);
    else if (rank == 0)
      std::fprintf(stderr, "hypre-poisson: error: n must be a whole number from 2 to 1290, got '%s'\n",
                   argument.c_str());
    HYPRE_Finalize();
    MPI_Finalize();
    return 1;
  }
  const HYPRE_BigInt rows = n * n * n;
  const HYPRE_BigInt first = rows * rank / ranks, last = rows * (rank + 1) / ranks - 1;

  const double start = now();
  HYPRE_IJMatrix A_ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, first, last, first, last, &A_ij);
  HYPRE_IJMatrixSetObjectType(A_ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(A_ij);
  std::vector<HYPRE_BigInt> cols;
  std::vector<double> vals;
  for (HYPRE_BigInt row = first; row <= last; ++row) {
    stencil_row(row, n, cols, vals);
    HYPRE_Int count = static_cast<HYPRE_Int>(cols.size());
    HYPRE_IJMatrixSetValues(A_ij, 1, &count, &row, cols.data(), vals.data());
  }
  HYPRE_IJMatrixAssemble(A_ij);
  HYPRE_ParCSRMatrix A;
  HYPRE_IJMatrixGetObject(A_ij, reinterpret_cast<void**>(&A));

  HYPRE_IJVector b_ij, x_ij;
  for (HYPRE_IJVector* v : {&b_ij, &x_ij}) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, first, last, v);
    HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*v);
  }
  std::vector<HYPRE_BigInt> indices;
  for (HYPRE_BigInt row = first; row <= last; ++row) indices.push_back(row);
  std::vector<double> ones(indices.size(), 1.0), zeros(indices.size(), 0.0);
  HYPRE_IJVectorSetValues(b_ij, static_cast<HYPRE_Int>(indices.size()), indices.data(), ones.data());
  HYPRE_IJVectorSetValues(x_ij, static_cast<HYPRE_Int>(indices.size()), indices.data(), zeros.data());
  HYPRE_IJVectorAssemble(b_ij);
  HYPRE_IJVectorAssemble(x_ij);
  HYPRE_ParVector b, x;
  HYPRE_IJVectorGetObject(b_ij, reinterpret_cast<void**>(&b));
  HYPRE_IJVectorGetObject(x_ij, reinterpret_cast<void**>(&x));
  const double assembled = now();

  HYPRE_Solver amg, pcg;
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetCoarsenType(amg, 10);  // HMIS
  HYPRE_BoomerAMGSetInterpType(amg, 6);    // extended+i
  HYPRE_BoomerAMGSetPMaxElmts(amg, 4);
  HYPRE_BoomerAMGSetStrongThreshold(amg, 0.25);
  HYPRE_BoomerAMGSetRelaxType(amg, 8);     // l1-scaled symmetric hybrid Gauss-Seidel
  HYPRE_BoomerAMGSetNumSweeps(amg, 1);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, 1e-8);
  HYPRE_PCGSetMaxIter(pcg, 500);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetPrecond(pcg, reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSolve),
                      reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSetup), amg);

  MPI_Barrier(MPI_COMM_WORLD);
  const double setup_start = now();
  HYPRE_ParCSRPCGSetup(pcg, A, b, x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double solve_start = now();
  HYPRE_ParCSRPCGSolve(pcg, A, b, x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double end = now();

  HYPRE_Int iterations = 0;
  double relative = 0.0;
  HYPRE_PCGGetNumIterations(pcg, &iterations);
  HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &relative);
  if (rank == 0)
    std::printf("RESULT ranks=%d n=%lld assembly=%.3f setup=%.3f solve=%.3f total=%.3f iters=%d relres=%.3e\n", ranks,
                static_cast<long long>(n), assembled - start, solve_start - setup_start, end - solve_start,
                end - setup_start, static_cast<int>(iterations), relative);

  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJMatrixDestroy(A_ij);
  HYPRE_IJVectorDestroy(b_ij);
  HYPRE_IJVectorDestroy(x_ij);
  HYPRE_Finalize();
  MPI_Finalize();
  return relative <= 1e-8 ? 0 : 3;
}

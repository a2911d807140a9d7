#pragma once
// VTK XML image data (.vti) output for grid problems, readable by ParaView. Point data arrays are the
// fields given (solution, right-hand side, aggregate ids, ...), one value per unknown; Dirichlet
// boundary points are not unknowns and are not written.
#include <string>
#include <vector>

#include "problems/problem.hpp"

namespace amgsolve {

struct ScalarField {
  std::string name;
  Vector<double> values;
};

struct IntegerField {
  std::string name;
  Array<Index> values;
};

// Written atomically (temporary file + rename).
void write_vti(const std::string& path, const Grid& grid, const std::vector<ScalarField>& scalars,
               const std::vector<IntegerField>& integers = {});

}  // namespace amgsolve

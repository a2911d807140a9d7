#pragma once
// The diffuse-optical mouse (problem.type: mouse): phantom, sources, one hierarchy per wavelength, a solve
// per source, fluorescence, VTK of the animal.
#include "config/config.hpp"
#include "output/report.hpp"

namespace amgsolve {

int run_mouse(const Config& config, RunRecord& record);

}  // namespace amgsolve

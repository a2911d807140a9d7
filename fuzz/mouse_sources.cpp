// libFuzzer target: the mouse's source list. The input is the YAML value of `problem.sources` (spots, scan
// grid, power); it goes through the config loader and then places the sources in a coarse voxel mouse
// (problems/mouse.hpp: place_sources), built once. A spot off the animal, NaN or a huge coordinate must be an
// InputError, never a crash or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "config/config.hpp"
#include "problems/mouse.hpp"
#include "problems/mouse_phantom.hpp"

namespace {

struct CoarseMouse {
  amgsolve::PhantomParams shape;
  amgsolve::Phantom phantom;
  amgsolve::VoxelDomain domain;
  amgsolve::TissueTable optics = amgsolve::default_tissue_table();

  CoarseMouse() {
    shape.voxel_size = 2.0;  // mm: a few thousand voxels, built in milliseconds
    phantom = amgsolve::build_mouse_phantom(shape);
    domain = amgsolve::make_voxel_domain(phantom.size, phantom.origin, phantom.voxel_size, [&](std::int64_t v) {
      return phantom.label[v] != static_cast<std::uint8_t>(amgsolve::Tissue::outside);
    });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const CoarseMouse mouse;
  const std::string sources(reinterpret_cast<const char*>(data), size);
  try {
    const amgsolve::Config config =
        amgsolve::parse_config("problem:\n  type: mouse\n  sources: " + sources + "\n", "fuzz.yaml");
    const amgsolve::MouseParams& p = config.problem.mouse;
    const auto spots = p.spots.empty() ? amgsolve::back_scan_grid(p.scan_grid[0], p.scan_grid[1]) : p.spots;
    (void)amgsolve::place_sources(mouse.domain, mouse.shape, mouse.optics, spots);
  } catch (const amgsolve::InputError&) {
    // the expected answer to a bad source list
  }
  return 0;
}

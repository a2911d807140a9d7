#pragma once
// Tissue types of the mouse phantom and their optical properties at the two wavelengths of a
// fluorescence measurement (values and sources in tissue_optics.cpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace amgsolve {

enum class Tissue : std::uint8_t {
  outside = 0,  // air: not an unknown
  muscle,       // skin, muscle and the rest of the soft tissue
  bone,         // skull and spine
  brain,
  heart,
  lungs,
  liver,
  kidneys,
  stomach,
  intestine,
  tumour,
};
inline constexpr int kTissueCount = 11;

const char* tissue_name(Tissue t);
std::optional<Tissue> tissue_from_name(const std::string& name);

struct OpticalProperties {
  double mua = 0;   // absorption coefficient, 1/mm
  double musp = 0;  // reduced scattering coefficient, 1/mm
};

// Properties per tissue and band (0: excitation, 1: emission).
using TissueTable = std::array<std::array<OpticalProperties, 2>, kTissueCount>;

// The published values (tissue_optics.cpp) at these wavelengths.
inline constexpr double kExcitationNm = 750;
inline constexpr double kEmissionNm = 800;
TissueTable default_tissue_table();

}  // namespace amgsolve

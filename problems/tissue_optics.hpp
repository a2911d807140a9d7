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

// Wavelengths (nm) at which the chromophore spectra are tabulated, and the default pair.
inline constexpr std::array<int, 4> kTabulatedNm = {650, 700, 750, 800};
inline constexpr int kExcitationNm = 750;
inline constexpr int kEmissionNm = 800;

// The published tissue model (tissue_optics.cpp) evaluated at the two wavelengths, each one of
// kTabulatedNm (InputError otherwise).
TissueTable tissue_table(int excitation_nm = kExcitationNm, int emission_nm = kEmissionNm);
inline TissueTable default_tissue_table() { return tissue_table(); }

}  // namespace amgsolve

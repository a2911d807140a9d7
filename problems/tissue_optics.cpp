// Optical properties of mouse tissues at an excitation and an emission wavelength among 650, 700, 750
// and 800 nm (default 750/800 nm, the band of near-infrared dyes such as Alexa Fluor 750 used in FMT).
//
// Model and parameters: Alexandrakis, Rannou & Chatziioannou, "Tomographic bioluminescence imaging by use
// of a combined optical-PET (OPET) system: a computer simulation feasibility study", Phys. Med. Biol. 50
// (2005) 4225, Table 1:
//   mu_a  = S_B (x mu_a,HbO2 + (1 - x) mu_a,Hb) + S_W mu_a,water     (blood volume fraction S_B, oxygen
//   mu_s' = a lambda^-b   (lambda in nm, 1/mm)                        saturation x, water fraction S_W)
// (the printed equation swaps HbO2 and Hb; the form above is the physically meaningful one).
// Whole-blood absorption from the molar extinction of haemoglobin (Prahl's compilation of Gratzer and
// Kollias) at 150 g/L and 64 500 g/mol: mu_a = ln(10) e 150 / 64500 per cm. Water from Hale & Querry,
// Appl. Opt. 12 (1973) 555: mu_a = 4 pi k / lambda.
// Tissues missing from Table 1: brain from Jacques, Phys. Med. Biol. 58 (2013) R37 (rat brain cortex:
// S_B 0.03, x 0.6, S_W 0.75, mu_s' = 2.14 (lambda / 500 nm)^-1.2 per mm); intestine with the stomach's
// (gastrointestinal) parameters; tumour: an assumed well-perfused soft tissue (S_B 0.05, x 0.65,
// S_W 0.8, mu_s' of muscle scaled to 1/mm at 750 nm), of the order of the tumour values tabulated for
// human tissue (Biomed. Opt. Express 12 (2021) 1391, Table 2). Skin and the remaining soft tissue use
// the muscle row. Every value can be overridden in the YAML (problem.tissues.<name>.mua / .musp).
#include "problems/tissue_optics.hpp"

#include <cmath>
#include <string>

#include "common/error.hpp"

namespace amgsolve {
namespace {

constexpr const char* kNames[kTissueCount] = {"outside", "muscle",  "bone",    "brain",     "heart", "lungs",
                                              "liver",   "kidneys", "stomach", "intestine", "tumour"};

}  // namespace

const char* tissue_name(Tissue t) { return kNames[static_cast<int>(t)]; }

std::optional<Tissue> tissue_from_name(const std::string& name) {
  for (int t = 0; t < kTissueCount; ++t)
    if (name == kNames[t]) return static_cast<Tissue>(t);
  return std::nullopt;
}

namespace {

struct Chromophores {
  double nm;
  double hbo2, hb;  // molar extinction, 1/(cm M)
  double water_k;   // imaginary refractive index of water
};
// Haemoglobin extinction and water's imaginary index at the tabulated wavelengths (kTabulatedNm).
constexpr Chromophores kSpectra[4] = {{650.0, 368.0, 3750.12, 1.64e-8},
                                      {700.0, 290.0, 1794.28, 3.35e-8},
                                      {750.0, 518.0, 1405.24, 1.56e-7},
                                      {800.0, 816.0, 761.72, 1.25e-7}};

const Chromophores& spectrum_at(int nm) {
  for (const Chromophores& c : kSpectra)
    if (c.nm == nm) return c;
  throw InputError(std::to_string(nm) + " nm is not tabulated (the tissue model has spectra at 650, 700, 750 and 800 nm)");
}

struct TissueModel {
  double blood, saturation, water;  // S_B, x, S_W
  double a, b;                      // mu_s' = a lambda^-b (lambda in nm); b < 0 marks the brain's form
};

constexpr TissueModel kModels[kTissueCount] = {
    {0, 0, 0, 0, 0},                  // outside
    {0.07, 0.8, 0.5, 4.0e7, 2.82},    // muscle (skin and soft tissue)
    {0.049, 0.8, 0.15, 35600, 1.47},  // bone
    {0.03, 0.6, 0.75, 0, -1.2},       // brain: mu_s' = 2.14 (lambda / 500)^-1.2
    {0.05, 0.75, 0.5, 10600, 1.43},   // heart
    {0.15, 0.85, 0.85, 68.4, 0.53},   // lungs
    {0.3, 0.75, 0.7, 629, 1.05},      // liver
    {0.056, 0.75, 0.8, 41700, 1.51},  // kidneys
    {0.01, 0.7, 0.8, 792, 0.97},      // stomach
    {0.01, 0.7, 0.8, 792, 0.97},      // intestine (gastrointestinal tract)
    {0.05, 0.65, 0.8, 0, 2.82},       // tumour: muscle's spectral shape, 1/mm at 750 nm
};

double blood_absorption(double extinction) {
  return std::log(10.0) * extinction * 150.0 / 64500.0 / 10.0;  // 1/mm
}

OpticalProperties properties(const TissueModel& m, const Chromophores& c) {
  OpticalProperties p;
  const double water = 4.0 * 3.14159265358979323846 * c.water_k / (c.nm * 1e-6);  // 1/mm
  p.mua = m.blood * (m.saturation * blood_absorption(c.hbo2) + (1.0 - m.saturation) * blood_absorption(c.hb)) +
          m.water * water;
  if (m.b < 0)
    p.musp = 2.14 * std::pow(c.nm / 500.0, m.b);
  else if (m.a == 0)
    p.musp = std::pow(c.nm / 750.0, -m.b);
  else
    p.musp = m.a * std::pow(c.nm, -m.b);
  return p;
}

}  // namespace

TissueTable tissue_table(int excitation_nm, int emission_nm) {
  const Chromophores* bands[2] = {&spectrum_at(excitation_nm), &spectrum_at(emission_nm)};
  TissueTable table{};
  for (int t = 1; t < kTissueCount; ++t)
    for (int band = 0; band < 2; ++band) table[t][band] = properties(kModels[t], *bands[band]);
  return table;
}

}  // namespace amgsolve

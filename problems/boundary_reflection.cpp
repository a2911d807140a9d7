#include "problems/boundary_reflection.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "common/error.hpp"

namespace amgsolve {

double fresnel_reflectance(double n, double theta) {
  const double s = n * std::sin(theta);  // sine of the refracted angle
  if (s >= 1.0) return 1.0;              // total internal reflection
  const double ci = std::cos(theta), ct = std::sqrt(1.0 - s * s);
  // Amplitude ratios for s- and p-polarised light (tissue index n against 1).
  const double rs = (n * ci - ct) / (n * ci + ct), rp = (ci - n * ct) / (ci + n * ct);
  return 0.5 * (rs * rs + rp * rp);
}

namespace {

// 20-point Gauss-Legendre nodes and weights on [-1, 1] (positive half; the rule is symmetric).
constexpr std::array<double, 10> kNodes = {0.0765265211334973, 0.2277858511416451, 0.3737060887154195,
                                           0.5108670019508271, 0.6360536807265150, 0.7463319064601508,
                                           0.8391169718222188, 0.9122344282513259, 0.9639719272779138,
                                           0.9931285991850949};
constexpr std::array<double, 10> kWeights = {0.1527533871307258, 0.1491729864726037, 0.1420961093183820,
                                             0.1316886384491766, 0.1181945319615184, 0.1019301198172404,
                                             0.0832767415767048, 0.0626720483341091, 0.0406014298003869,
                                             0.0176140071391521};

// Integral of f over [a, b] by the 20-point rule on each of `panels` equal panels.
template <class F>
double integrate(F f, double a, double b, int panels) {
  double sum = 0;
  const double width = (b - a) / panels;
  for (int p = 0; p < panels; ++p) {
    const double mid = a + (p + 0.5) * width, half = 0.5 * width;
    for (std::size_t k = 0; k < kNodes.size(); ++k)
      sum += half * kWeights[k] * (f(mid - half * kNodes[k]) + f(mid + half * kNodes[k]));
  }
  return sum;
}

}  // namespace

ReflectionMoments reflection_moments(double n) {
  if (!(n >= 1.0)) throw InputError("relative refractive index must be >= 1, got " + std::to_string(n));
  const double critical = std::asin(1.0 / n);
  // R_F has a square-root corner at the critical angle: with t = critical (1 - u^2) the integrand is smooth
  // in u, and 16 panels of the 20-point rule give the moments to about 1e-14.
  const int panels = 16;
  auto over_u = [&](auto weight) {
    return integrate(
        [&](double u) {
          const double t = critical * (1.0 - u * u);
          return weight(t) * fresnel_reflectance(n, t) * 2.0 * critical * u;
        },
        0.0, 1.0, panels);
  };
  ReflectionMoments m;
  m.r_phi = over_u([](double t) { return 2.0 * std::sin(t) * std::cos(t); });
  m.r_j = over_u([](double t) { return 3.0 * std::sin(t) * std::pow(std::cos(t), 2); });
  // Beyond the critical angle R_F = 1: int 2 sin cos = cos^2(critical), int 3 sin cos^2 = cos^3(critical).
  const double c = std::cos(critical);
  m.r_phi += c * c;
  m.r_j += c * c * c;
  return m;
}

double robin_factor(double n, ReflectionModel model) {
  if (!(n >= 1.0)) throw InputError("relative refractive index must be >= 1, got " + std::to_string(n));
  if (model == ReflectionModel::exact) {
    const ReflectionMoments m = reflection_moments(n);
    return (1.0 + m.r_j) / (1.0 - m.r_phi);
  }
  const double r = std::max(-1.440 / (n * n) + 0.710 / n + 0.668 + 0.0636 * n, 0.0);
  return (1.0 + r) / (1.0 - r);
}

const char* reflection_model_name(ReflectionModel model) {
  return model == ReflectionModel::exact ? "exact" : "groenhuis";
}

}  // namespace amgsolve

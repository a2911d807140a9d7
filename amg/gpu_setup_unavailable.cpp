// Builds without CUDA: the GPU setup entry points exist and say why they cannot run.
#include <string>

#include "amg/gpu_setup.hpp"
#include "common/device.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

// "<what> needs a CUDA build: built without CUDA (configure with ...)", the reason in gpu_status()'s words.
[[noreturn]] void unavailable(const std::string& what) {
  throw Error(what + " needs a CUDA build: " + gpu_status().unavailable_reason);
}

}  // namespace

template <class Value>
Strength gpu_strength_of_connection(const CsrMatrix<Value>&, double) {
  unavailable("strength of connection on the GPU");
}

Array<std::uint8_t> gpu_mis2(const StrengthGraph&, std::uint64_t, int*) { unavailable("MIS-2 on the GPU"); }

Aggregates gpu_mis2_aggregation(const StrengthGraph&, std::uint64_t) {
  unavailable("MIS-2 aggregation on the GPU");
}

template <class Value>
CsrMatrix<Value> gpu_tentative_prolongation(const Aggregates&) {
  unavailable("tentative prolongation on the GPU");
}

template Strength gpu_strength_of_connection(const CsrMatrix<double>&, double);
template Strength gpu_strength_of_connection(const CsrMatrix<float>&, double);
template CsrMatrix<double> gpu_tentative_prolongation(const Aggregates&);
template CsrMatrix<float> gpu_tentative_prolongation(const Aggregates&);

}  // namespace amgsolve

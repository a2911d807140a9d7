#include "spgemm/registry.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace amgsolve {

SpgemmRegistry& SpgemmRegistry::instance() {
  static SpgemmRegistry registry = [] {
    SpgemmRegistry r;
    register_all_spgemm_backends(r);
    return r;
  }();
  return registry;
}

void SpgemmRegistry::add(std::unique_ptr<SpgemmBackend> backend) {
  if (find(backend->name())) throw Error("SpGEMM backend '" + backend->name() + "' registered twice");
  backends_.push_back(std::move(backend));
}

const SpgemmBackend* SpgemmRegistry::find(std::string_view name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

const SpgemmBackend& SpgemmRegistry::get(std::string_view name) const {
  const SpgemmBackend* backend = find(name);
  if (!backend)  // the name shown shortened and escaped: it may be anything a caller passed
    throw InputError("unknown SpGEMM backend '" + printable(std::string(name)) + "' (available: " + names() + ")");
  if (!backend->available())
    throw InputError("SpGEMM backend '" + std::string(name) + "' cannot run here: " + backend->unavailable_reason());
  return *backend;
}

const SpgemmBackend& SpgemmRegistry::get(std::string_view name, BackendKind backend) const {
  const SpgemmBackend* found = find(name);
  if (!found || found->runs_on() != backend)
    throw InputError("'" + printable(std::string(name)) + "' is not a SpGEMM backend of backend " + to_string(backend) +
                     " (it has: " + names(backend) + ")");
  return get(name);
}

const char* default_spgemm_backend(BackendKind backend) {
  return backend == BackendKind::cuda ? "cusparse" : "gustavson";
}

std::vector<const SpgemmBackend*> SpgemmRegistry::all() const {
  std::vector<const SpgemmBackend*> out;
  for (const auto& b : backends_) out.push_back(b.get());
  return out;
}

std::string SpgemmRegistry::names() const {
  std::string out;
  for (const auto& b : backends_) out += (out.empty() ? "" : ", ") + b->name();
  return out;
}

std::string SpgemmRegistry::names(BackendKind backend) const {
  std::string out;
  for (const auto& b : backends_)
    if (b->runs_on() == backend) out += (out.empty() ? "" : ", ") + b->name();
  return out.empty() ? "none in this build" : out;
}

}  // namespace amgsolve

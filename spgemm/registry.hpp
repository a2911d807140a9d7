#pragma once
// Name -> SpGEMM backend. Each backend is one file (or folder) in spgemm/ that ends with
// AMGSOLVE_REGISTER_SPGEMM(id, Class) (id: the name with '-' as '_') and is listed once in
// spgemm/CMakeLists.txt with amgsolve_spgemm_backend(id ...); CMake generates the list that fills the registry, so adding a backend
// touches neither the registry nor the AMG code.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spgemm/spgemm.hpp"

namespace amgsolve {

class SpgemmRegistry {
 public:
  // The process-wide registry, filled with every compiled-in backend on first use.
  static SpgemmRegistry& instance();

  void add(std::unique_ptr<SpgemmBackend> backend);

  // Throws InputError naming the unknown backend and listing the registered ones; also when the
  // backend exists but cannot run here (with its reason).
  const SpgemmBackend& get(std::string_view name) const;
  const SpgemmBackend* find(std::string_view name) const;
  std::vector<const SpgemmBackend*> all() const;
  std::string names() const;  // "gustavson, hash, ..." for messages

 private:
  std::vector<std::unique_ptr<SpgemmBackend>> backends_;
};

}  // namespace amgsolve

#define AMGSOLVE_REGISTER_SPGEMM(NAME, CLASS)                      \
  namespace amgsolve {                                             \
  void register_spgemm_##NAME(SpgemmRegistry& registry) {          \
    registry.add(std::make_unique<CLASS>());                       \
  }                                                                \
  }

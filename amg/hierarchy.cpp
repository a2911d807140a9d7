#include "amg/hierarchy.hpp"

#include "amg/smoothed_aggregation.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {

template <class Value>
AmgHierarchy<Value>::AmgHierarchy(std::shared_ptr<const CsrMatrix<Value>> A, const AmgParams& params,
                                  LevelCallback on_level, ProductCallback on_product, BackendKind backend)
    : params_(params) {
  Timer total;
  if (params_.spgemm.empty()) params_.spgemm = default_spgemm_backend(backend);
  const SpgemmBackend& spgemm = SpgemmRegistry::instance().get(params_.spgemm, backend);
  SmoothedAggregation<Value>(params_, backend, spgemm, std::move(on_product)).build(std::move(A), *this, on_level);
  setup_seconds_ = total.seconds();
}

template <class Value>
AmgHierarchy<Value>::~AmgHierarchy() = default;

template <class Value>
void AmgHierarchy<Value>::add_level(Shared<Value> A, CoarseningStep<Value>&& step, const LevelInfo& info) {
  if (levels_.empty()) finest_aggregates_ = std::move(step.aggregates);
  levels_.push_back(Level{std::move(A), std::move(step.P), std::move(step.R), step.smoother});
  info_.push_back(info);
}

template <class Value>
void AmgHierarchy<Value>::add_coarsest(Shared<Value> A, std::shared_ptr<const SparseLdlt<Value>> factor,
                                       const LevelInfo& info) {
  levels_.push_back(Level{std::move(A), {}, {}, {}});
  coarse_ = std::move(factor);
  info_.push_back(info);
}

template <class Value>
double AmgHierarchy<Value>::operator_complexity() const {
  double total = 0;
  for (const auto& l : levels_) total += static_cast<double>(l.A->nnz());
  return total / static_cast<double>(std::max<Offset>(1, levels_.front().A->nnz()));
}

template <class Value>
double AmgHierarchy<Value>::grid_complexity() const {
  double total = 0;
  for (const auto& l : levels_) total += l.A->rows;
  return total / std::max<double>(1, levels_.front().A->rows);
}

template <class Value>
std::uint64_t AmgHierarchy<Value>::bytes() const {
  std::uint64_t total = 0;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (l > 0) total += levels_[l].A->bytes();
    if (levels_[l].P) total += levels_[l].P->bytes() + levels_[l].R->bytes();
  }
  return total;
}

template class AmgHierarchy<double>;
template class AmgHierarchy<float>;

}  // namespace amgsolve

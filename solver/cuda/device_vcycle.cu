// The device V-cycle (see device_vcycle.cuh): AmgHierarchy::cycle() on the device.
#include "solver/cuda/device_vcycle.cuh"

namespace amgsolve::device {
namespace {

template <class V>
struct Residual {  // r = b - A x
  const V* b;
  V* r;
  __device__ void operator()(Index row, V ax) const { r[row] = b[row] - ax; }
};

}  // namespace

template <class V>
DeviceVcycle<V>::DeviceVcycle(const DeviceSolvePlan<V>& plan, const DeviceOperator<V>* level0_matrix,
                              const DeviceContext& context)
    : context_(context), pre_smooth_(plan.pre_smooth), post_smooth_(plan.post_smooth) {
  levels_.resize(plan.levels.size());  // not resized again: levels keep their addresses
  for (std::size_t l = 0; l < plan.levels.size(); ++l) {
    const typename DeviceSolvePlan<V>::Level& from = plan.levels[l];
    Level& level = levels_[l];
    if (l == 0 && level0_matrix) {
      level.A = level0_matrix;
    } else {
      level.own_A = std::make_unique<DeviceOperator<V>>(*from.A, plan.format, context);
      level.A = level.own_A.get();
    }
    level.P = std::make_unique<DeviceOperator<V>>(*from.P, plan.format, context);
    level.R = std::make_unique<DeviceOperator<V>>(*from.R, plan.format, context);
    level.smoother = std::make_unique<DeviceSmoother<V>>(from.smoother, from.smoother_diagonal, context);
    const auto n = static_cast<std::size_t>(from.A->rows);
    if (l > 0) level.b = DeviceArray<V>(n);
    level.x[0] = DeviceArray<V>(n);
    level.x[1] = DeviceArray<V>(n);
    level.work = DeviceArray<V>(n);
  }
  coarse_ = std::make_unique<DeviceCoarseSolve<V>>(plan, context);
  if (!levels_.empty()) coarse_b_ = DeviceArray<V>(static_cast<std::size_t>(plan.coarse_rows));
}

template <class V>
DeviceVcycle<V>::~DeviceVcycle() = default;

template <class V>
const V* DeviceVcycle<V>::apply(const V* b, const int* guard) {
  return cycle(0, b, guard);
}

template <class V>
V* DeviceVcycle<V>::coarser_rhs(std::size_t l) {
  return l + 1 < levels_.size() ? raw_data(levels_[l + 1].b) : raw_data(coarse_b_);
}

// V-cycle on level l for the right-hand side b; returns the buffer holding x (zero initial guess).
template <class V>
const V* DeviceVcycle<V>::cycle(std::size_t l, const V* b, const int* guard) {
  if (l == levels_.size()) return coarse_->solve(b, guard);
  Level& level = levels_[l];
  const DeviceOperator<V>& A = *level.A;
  V* const x[2] = {raw_data(level.x[0]), raw_data(level.x[1])};
  int current = 0;
  for (int s = 0; s < pre_smooth_; ++s) level.smoother->smooth(A, b, x, current, raw_data(level.work), s == 0, guard);
  if (pre_smooth_ == 0 && A.rows() > 0)
    AMGSOLVE_CUDA_CHECK(
        cudaMemsetAsync(x[current], 0, sizeof(V) * static_cast<std::size_t>(A.rows()), context_.stream()));

  A.apply(x[current], Residual<V>{b, raw_data(level.work)}, guard);
  V* coarse_b = coarser_rhs(l);
  level.R->multiply(raw_data(level.work), coarse_b, guard);
  const V* coarse_x = cycle(l + 1, coarse_b, guard);

  level.P->multiply_add(coarse_x, x[current], guard);
  for (int s = 0; s < post_smooth_; ++s)
    level.smoother->smooth(A, b, x, current, raw_data(level.work), false, guard);
  return x[current];
}

template <class V>
std::uint64_t DeviceVcycle<V>::bytes() const {
  std::uint64_t total = coarse_->bytes() + sizeof(V) * coarse_b_.size();
  for (const Level& level : levels_) {
    if (level.own_A) total += level.own_A->bytes();
    total += level.P->bytes() + level.R->bytes() + level.smoother->bytes();
    total += sizeof(V) * (level.b.size() + level.x[0].size() + level.x[1].size() + level.work.size());
  }
  return total;
}

template class DeviceVcycle<double>;
template class DeviceVcycle<float>;

}  // namespace amgsolve::device

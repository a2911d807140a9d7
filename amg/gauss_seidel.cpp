#include "amg/smoother.hpp"

namespace amgsolve {

SmootherSpec gauss_seidel_spec(Index rows, std::int64_t unit, const Array<Index>* node_ptr,
                               const Array<Index>* node_blocks) {
  SmootherSpec s;
  s.type = SmootherType::gauss_seidel;
  s.sweep_unit = unit;
  auto blocks = std::make_shared<Array<Index>>();
  if (node_ptr && node_blocks) {
    s.nodes_per_sweep_unit = true;
    for (const Index first_node : *node_blocks) blocks->push_back((*node_ptr)[first_node]);
  } else {
    for (std::int64_t first = 0; first < rows; first += unit) blocks->push_back(static_cast<Index>(first));
    blocks->push_back(rows);
  }
  s.sweep_blocks = std::move(blocks);
  return s;
}

}  // namespace amgsolve

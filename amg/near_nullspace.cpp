#include "amg/near_nullspace.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "common/reduction_block.hpp"
#include "common/unit_scale.hpp"

namespace amgsolve {

std::string near_nullspace_problem(Index rows, int block_size, const NearNullspaceVectors& given) {
  if (block_size < 1) return "amg.block_size must be >= 1, got " + std::to_string(block_size);
  if (rows % block_size != 0)
    return "amg.block_size is " + std::to_string(block_size) + ", but the matrix has " + std::to_string(rows) +
           " rows, no multiple of it (a node's unknowns are consecutive rows)";
  if (given.count <= 0) return "";
  if (given.count > kMaxNearNullspaceVectors)
    return "the near-nullspace has " + std::to_string(given.count) + " vectors, more than " +
           std::to_string(kMaxNearNullspaceVectors);
  const std::size_t expected = static_cast<std::size_t>(rows) * static_cast<std::size_t>(given.count);
  if (!given.values || given.values->size() != expected)
    return "the near-nullspace has " + std::to_string(given.values ? given.values->size() : 0) +
           " values, where the matrix's " + std::to_string(rows) + " rows and its " + std::to_string(given.count) +
           " vectors need " + std::to_string(expected);
  for (std::size_t k = 0; k < expected; ++k)
    if (!std::isfinite((*given.values)[k]))
      return "the near-nullspace's vector " + std::to_string(k % given.count + 1) + " has a value that is not finite "
             "in row " + std::to_string(k / given.count + 1);
  return "";
}

Array<Index> regular_reduction_blocks(Index nodes) {
  Array<Index> blocks = {0};
  for (std::int64_t first = kReductionBlock; first < nodes; first += kReductionBlock) blocks.push_back(static_cast<Index>(first));
  if (nodes > 0) blocks.push_back(nodes);
  return blocks;
}

std::vector<double> largest_entries(const Vector<double>& values, int count) {
  std::vector<double> largest(static_cast<std::size_t>(std::max(count, 0)), 0.0);
  if (largest.empty()) return largest;
  for (std::size_t e = 0; e < values.size(); ++e)
    largest[e % largest.size()] = std::max(largest[e % largest.size()], std::abs(values[e]));
  return largest;
}

std::string zero_vector_problem(const std::vector<double>& largest) {
  const auto zero = std::find(largest.begin(), largest.end(), 0.0);
  if (zero == largest.end()) return "";
  return "the near-nullspace's vector " + std::to_string(zero - largest.begin() + 1) + " is zero on every row";
}

NearNullspace finest_near_nullspace(Index rows, int block_size, const NearNullspaceVectors& given,
                                    const std::vector<double>* largest) {
  if (const std::string problem = near_nullspace_problem(rows, block_size, given); !problem.empty())
    throw InputError(problem);
  NearNullspace B;
  B.node_ptr.resize(static_cast<std::size_t>(rows / block_size) + 1);
  for (std::size_t n = 0; n < B.node_ptr.size(); ++n) B.node_ptr[n] = static_cast<Index>(n) * block_size;
  B.reduction_blocks = regular_reduction_blocks(B.nodes());
  if (given.count <= 0) {  // the unit vector of each component
    B.vectors = block_size;
    B.values.assign(static_cast<std::size_t>(rows) * block_size, 0.0);
    for (Index i = 0; i < rows; ++i) B.values[static_cast<std::size_t>(i) * block_size + i % block_size] = 1.0;
    return B;
  }
  B.vectors = given.count;
  B.values = *given.values;
  std::vector<double> scale = largest ? *largest : largest_entries(B.values, B.vectors);
  for (double& s : scale) s = unit_scale(s);
  for (std::size_t e = 0; e < B.values.size(); ++e) B.values[e] *= scale[e % scale.size()];
  return B;
}

std::string system_support_problem(BackendKind kind) {
  if (kind == BackendKind::cpu) return "";
  return "amg.block_size and a near-nullspace (a system's setup) need the cpu backend (of one process or of each "
         "MPI rank); not yet the " + std::string(to_string(kind)) + " backend";
}

void require_system_nullspace_choice(NullspaceChoice nullspace) {
  if (nullspace == NullspaceChoice::constant)
    throw InputError("amg.nullspace constant is a scalar problem's: a system's nullspace (amg.block_size or a "
                     "near-nullspace) is found among its near-nullspace vectors: use auto or near_nullspace");
}

}  // namespace amgsolve

#include "amg/mpi/distributed_setup.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "amg/near_nullspace.hpp"
#include "amg/nullspace.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/spectral_radius.hpp"
#include "amg/tentative_prolongation.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"

namespace amgsolve {

namespace {

// A rank's block of nodes among all ranks' (no ghosts): counting and numbering over the ranks.
class RankLayout : public GraphLayout {
 public:
  RankLayout(const Communicator& comm, std::int64_t first) : comm_(comm), first_(first) {}
  std::int64_t first_node() const override { return first_; }
  std::int64_t sum(std::int64_t count) const override { return comm_.sum(count); }
  std::int64_t sum_before(std::int64_t count) const override { return comm_.sum_before(count); }

 private:
  const Communicator& comm_;
  std::int64_t first_;
};

// The strength graph of a rank's rows of A: its ghosts are A's ghost columns, their values come through
// A's halo.
template <class Value>
class HaloLayout final : public RankLayout {
 public:
  explicit HaloLayout(const DistributedMatrix<Value>& A) : RankLayout(A.communicator(), A.first_row()), A_(A) {}
  Index ghosts() const override { return static_cast<Index>(A_.ghost_columns().size()); }
  void fill_ghosts(Array<std::uint64_t>& values) const override { A_.fill_ghosts(values); }
  void fill_ghosts(Array<Index>& values) const override { A_.fill_ghosts(values); }

 private:
  const DistributedMatrix<Value>& A_;
};

// Whether a level's near-nullspace weights are all 1 (empty on every rank: the finest level). A rank
// without rows holds none on any level, so the ranks decide together.
bool unit_weights(const Communicator& comm, const Vector<double>& weights) {
  return comm.sum(static_cast<std::int64_t>(weights.size())) == 0;
}

}  // namespace

template <class Value>
MpiStrength<Value> strength_of_connection(const MpiBackend& backend, const DistributedMatrix<Value>& A, double theta) {
  MpiStrength<Value> s;
  s.local = strength_of_connection(A.local(), theta, A.with_ghosts(A.diagonal()));
  s.weak_entries = backend.comm().sum(static_cast<std::int64_t>(s.local.weak_entries));
  s.A = &A;
  return s;
}

template <class Value>
double strength_drift(const MpiBackend& backend, const DistributedMatrix<Value>& A, double theta, const Strength& kept,
                      Index sampled_rows) {
  const std::int64_t stride = drift_stride(A.global_rows(), sampled_rows);
  const DriftCount mine = strength_drift_count(A.local(), theta, kept, A.first_row(), stride, A.with_ghosts(A.diagonal()));
  return DriftCount{backend.comm().sum(static_cast<std::int64_t>(mine.couplings)),
                    backend.comm().sum(static_cast<std::int64_t>(mine.changed))}
      .share();
}

template <class Value>
DistributedMatrix<Value> filtered_matrix(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                                         const MpiStrength<Value>& strength, const Vector<double>& weights,
                                         Array<std::uint8_t>* filtered_rows, IsolatedRows isolated) {
  const Vector<double> column_weights = unit_weights(backend.comm(), weights) ? Vector<double>{} : A.with_ghosts(weights);
  // In A's local columns: A's layout serves (a ghost whose entries were all dropped is still exchanged).
  CsrMatrix<Value> F = filtered_matrix(A.local(), strength.local, column_weights, filtered_rows, isolated);
  return DistributedMatrix<Value>(A, std::move(F), typename DistributedMatrix<Value>::SameColumns{});
}

template <class Value>
Aggregates mis2_aggregation(const MpiBackend&, const MpiStrength<Value>& strength, std::uint64_t seed) {
  return mis2_aggregation(strength.local.graph, seed, HaloLayout<Value>(*strength.A));
}

void aggregate_left_out_nodes(const MpiBackend& backend, Aggregates& aggregates) {
  const auto nodes = static_cast<std::int64_t>(aggregates.id.size());
  aggregate_left_out_nodes(aggregates, RankLayout(backend.comm(), backend.comm().sum_before(nodes)));
}

BlockPartition coarse_partition(const Communicator& comm, std::int64_t count, std::int64_t mine, std::int64_t min_per_rank) {
  const int ranks = comm.size();
  min_per_rank = std::max(min_per_rank, kAggregateBlock);  // a rank that takes part holds a block at least
  const auto spread_over = static_cast<int>(std::clamp<std::int64_t>((count + min_per_rank - 1) / min_per_rank, 1, ranks));
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(ranks) + 1, count);
  if (spread_over < ranks) {
    const BlockPartition first_ranks(count, spread_over, kAggregateBlock);
    std::copy(first_ranks.offsets().begin(), first_ranks.offsets().end(), offsets.begin());
    return BlockPartition::from_offsets(std::move(offsets));
  }
  // Where each rank's aggregates begin, moved to the nearest block boundary (rounding keeps them in order);
  // the ranks after the last that made any start at the end, so that none of them holds a part of a block
  // (the last that made some holds the rest: left-out nodes' aggregates, numbered after all `mine`).
  // (Rank 0 starts at 0 even where no rank made any: a level of left-out nodes alone.)
  const BlockPartition made = comm.partition_of(mine);
  offsets[0] = 0;
  for (int r = 1; r < ranks; ++r) {
    const std::int64_t nearest = (made.begin(r) + kAggregateBlock / 2) / kAggregateBlock * kAggregateBlock;
    offsets[static_cast<std::size_t>(r)] = made.begin(r) == made.size() ? count : std::min(count, nearest);
  }
  return BlockPartition::from_offsets(std::move(offsets));
}

template <class Value>
DistributedMatrix<Value> tentative_prolongation(const MpiBackend& backend, const Aggregates& aggregates,
                                                const Vector<double>& weights, Vector<double>& coarse_weights) {
  // W: the aggregates' indicator with each node's weight w_i; the coarse weights w^c are the row sums of
  // W^T, integers that no order of addition changes (amg/tentative_prolongation.hpp): each rank sums its
  // rows' weights by local column of W, the ghost columns' sums go to the aggregates' owners (W's halo
  // backwards, no transpose of W), and the owners' totals come back for W's columns through W's halo.
  const Communicator& comm = backend.comm();
  const bool unit = unit_weights(comm, weights);
  const auto n = static_cast<Index>(aggregates.id.size());
  const auto weight = [&](Index i) { return unit ? 1.0 : weights[static_cast<std::size_t>(i)]; };
  CsrMatrix<double> rows(n, aggregates.count);
  for (Index i = 0; i < n; ++i) {
    if (aggregates.id[i] != kNotAggregated) {
      rows.col.push_back(aggregates.id[i]);
      rows.val.push_back(weight(i));
    }
    rows.row_ptr[i + 1] = static_cast<Offset>(rows.col.size());
  }
  const DistributedMatrix<double> W(
      comm, comm.partition_of(n),
      coarse_partition(comm, aggregates.count, aggregates.mis2_roots, kCoarseRowsPerRank),
      std::move(rows));
  Vector<double> by_column(static_cast<std::size_t>(W.local().cols), 0.0);
  for (Offset e = 0; e < W.local().nnz(); ++e) by_column[W.local().col[e]] += W.local().val[e];
  coarse_weights = W.sum_at_owners(by_column);
  const Vector<double> column_weights = W.with_ghosts(coarse_weights);

  // T_ij = sqrt(w_i) / sqrt(w^c_j), in W's pattern.
  const CsrMatrix<double>& pattern = W.local();
  CsrMatrix<Value> T(pattern.rows, pattern.cols);
  T.row_ptr = pattern.row_ptr;
  T.col = pattern.col;
  T.val.resize(pattern.val.size());
  for (Index i = 0; i < T.rows; ++i)
    for (Offset e = T.row_begin(i); e < T.row_end(i); ++e)
      T.val[e] = tentative_entry<Value>(weight(i), column_weights[T.col[e]]);
  return DistributedMatrix<Value>(W, std::move(T));
}

template <class Value>
RowSum largest_relative_row_sum(const MpiBackend& backend, const DistributedMatrix<Value>& A) {
  // The first row, in global order, of the largest relative sum, as one process finds it.
  const RowSum mine = largest_relative_row_sum(A.local());
  const Communicator::Located found =
      backend.comm().first_of_largest(mine.row < 0 ? -1 : A.first_row() + mine.row, mine.relative);
  if (found.index < 0) return {};
  return {static_cast<Index>(found.index), found.value};
}

namespace {

// Every rank's `mine`, in rank order, on every rank. Collective; beyond MPI's int counts, the same error on
// every rank.
std::vector<Index> gathered_on_every_rank(const Communicator& comm, const std::vector<Index>& mine) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()));
  const auto count = static_cast<std::int64_t>(mine.size());
  MPI_Allgather(&count, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm.get());
  std::vector<int> sizes(counts.size()), offsets(counts.size(), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (total > std::numeric_limits<int>::max()) break;
    offsets[r] = static_cast<int>(total);
    sizes[r] = static_cast<int>(std::min<std::int64_t>(counts[r], std::numeric_limits<int>::max()));
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max())
    throw Error("the links between the ranks' parts of the matrix's graph exceed MPI's int counts");
  std::vector<Index> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), static_cast<int>(count), MPI_INT32_T, all.data(), sizes.data(), offsets.data(),
                 MPI_INT32_T, comm.get());
  return all;
}

}  // namespace

namespace {

// The parts of the matrix's graph over all ranks, as connected_components counts them: `part` names each of
// this rank's rows by the smallest global row of its local part, `merged` holds what the links across rank
// boundaries joined (a part's name to a smaller one's).
struct RankParts {
  std::int64_t local_parts = 0;
  std::int64_t merges = 0;
  Array<Index> part;
  std::unordered_map<Index, Index> merged;
  // The part's name over all ranks: the smallest global row of the whole part.
  Index root(Index p) const {
    for (auto at = merged.find(p); at != merged.end() && at->second != p; at = merged.find(p)) p = at->second;
    return p;
  }
  // The parts over all ranks (collective).
  std::int64_t count(const Communicator& comm) const { return comm.sum(local_parts) - merges; }
};

// Union-find within each rank's rows, then the links between those parts across rank boundaries gathered on
// every rank (about the halo's size, not the matrix's) and joined by a union-find of their own. Collective.
RankParts rank_parts(const MpiBackend& backend, const DistributedMatrix<double>& A, const Array<Index>* node_ptr) {
  const CsrMatrix<double>& M = A.local();
  const Index own = M.rows;  // own columns are [0, own), the ghosts after them
  RankParts parts;
  std::vector<Index> parent;
  parts.local_parts = parts_of_nodes(parent, own, node_ptr);
  const auto find = [&](Index i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (Index i = 0; i < own; ++i)
    for (Offset k = M.row_begin(i); k < M.row_end(i); ++k)
      if (M.col[k] < own && M.val[k] != 0.0) {
        const Index a = find(i), b = find(M.col[k]);
        if (a == b) continue;
        parent[std::max(a, b)] = std::min(a, b);  // a root is its part's smallest row
        --parts.local_parts;
      }
  // Each local part named by its smallest global row, the ghosts' by their owners' names.
  const auto first = static_cast<Index>(A.first_row());
  parts.part = Array<Index>(static_cast<std::size_t>(M.cols));
  for (Index i = 0; i < own; ++i) parts.part[i] = first + find(i);
  A.fill_ghosts(parts.part);
  // A stored entry on either side links two parts, as in the one-process union-find; stored zeros link nothing.
  std::vector<Index> links;
  for (Index i = 0; i < own; ++i)
    for (Offset k = M.row_begin(i); k < M.row_end(i); ++k)
      if (M.col[k] >= own && M.val[k] != 0.0) {
        links.push_back(std::min(parts.part[i], parts.part[M.col[k]]));
        links.push_back(std::max(parts.part[i], parts.part[M.col[k]]));
      }
  const std::vector<Index> all = gathered_on_every_rank(backend.comm(), links);
  for (std::size_t e = 0; e + 1 < all.size(); e += 2) {
    parts.merged.try_emplace(all[e], all[e]);
    parts.merged.try_emplace(all[e + 1], all[e + 1]);
    const Index a = parts.root(all[e]), b = parts.root(all[e + 1]);
    if (a == b) continue;
    parts.merged[std::max(a, b)] = std::min(a, b);
    ++parts.merges;
  }
  return parts;
}

}  // namespace

Index connected_components(const MpiBackend& backend, const DistributedMatrix<double>& A,
                           const Array<Index>* node_ptr) {
  const RankParts parts = rank_parts(backend, A, node_ptr);
  return static_cast<Index>(parts.count(backend.comm()));
}

std::string floating_part(const MpiBackend& backend, const DistributedMatrix<double>& A, const NearNullspace* B) {
  const RankParts parts = rank_parts(backend, A, B ? &B->node_ptr : nullptr);
  if (parts.count(backend.comm()) < 2) return "";
  NearNullspace columns;
  if (B) {
    columns.vectors = B->vectors;
    rows_over_columns(A, B->values, B->vectors, columns.values);
  }
  // Each row's modes, by its local part, then by the whole part (one root lookup a local part).
  const int k = B ? B->vectors : 1;
  std::map<Index, PartModes> by_local_part, here;
  std::vector<char> moves(static_cast<std::size_t>(k)), holds(moves.size());
  for (Index i = 0; i < A.local().rows; ++i) {
    row_modes(A.local(), i, B ? &columns : nullptr, moves.data(), holds.data());
    by_local_part.try_emplace(parts.part[i], k).first->second.add(1, moves.data(), holds.data());
  }
  for (const auto& [local, modes] : by_local_part) here.try_emplace(parts.root(local), k).first->second.add(modes);
  // Every rank's parts on every rank, as (name, rows, k moves, k holds), joined by name: the first floating
  // part in global row order, as one process finds it.
  std::vector<Index> mine;
  for (const auto& [part, modes] : here) {
    mine.push_back(part);
    mine.push_back(static_cast<Index>(modes.rows));
    mine.insert(mine.end(), modes.moves.begin(), modes.moves.end());
    mine.insert(mine.end(), modes.holds.begin(), modes.holds.end());
  }
  const std::vector<Index> all = gathered_on_every_rank(backend.comm(), mine);
  const auto stride = static_cast<std::size_t>(2 + 2 * k);
  std::map<Index, PartModes> everywhere;
  for (std::size_t e = 0; e + stride <= all.size(); e += stride) {
    PartModes modes(k);
    modes.rows = all[e + 1];
    for (std::size_t v = 0; v < static_cast<std::size_t>(k); ++v) {
      modes.moves[v] = static_cast<char>(all[e + 2 + v]);
      modes.holds[v] = static_cast<char>(all[e + 2 + static_cast<std::size_t>(k) + v]);
    }
    everywhere.try_emplace(all[e], k).first->second.add(modes);
  }
  return first_floating_part(everywhere, B != nullptr);
}

NullspaceChoice resolve_nullspace(const MpiBackend& backend, const DistributedMatrix<double>& A, NullspaceChoice choice) {
  if (choice == NullspaceChoice::none || A.global_rows() == 0) return NullspaceChoice::none;
  const auto components = [&] { return connected_components(backend, A); };
  if (choice == NullspaceChoice::automatic) {  // as on one process: stopped at a rank's first row found
    const bool beyond = some_row_sum_beyond(A.local(), zero_row_sum_tolerance<double>());
    return backend.comm().sum(std::int64_t{beyond ? 1 : 0}) > 0 ? NullspaceChoice::none
                                                                 : constant_if_connected(components);
  }
  return resolve_nullspace(largest_relative_row_sum(backend, A), components, choice);
}

template <class Value>
void scale_and_add_tentative(const MpiBackend&, DistributedMatrix<Value>& P, const DistributedMatrix<Value>& A_f,
                             const DistributedMatrix<Value>& T, double omega) {
  // As on one process (amg/smoothed_prolongation.cpp); T's entry is found in P's row by its global column.
  const Vector<Value>& d = A_f.diagonal();
  const CsrMatrix<Value>& p = P.local();
  const CsrMatrix<Value>& t = T.local();
  Array<Value>& values = P.values();
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < p.rows; ++i) {
    const Value scale = static_cast<Value>(-omega / static_cast<double>(d[i]));
    for (Offset k = p.row_begin(i); k < p.row_end(i); ++k) values[k] *= scale;
    for (Offset e = t.row_begin(i); e < t.row_end(i); ++e) {
      const std::int64_t column = T.global_column(t.col[e]);
      for (Offset k = p.row_begin(i); k < p.row_end(i); ++k)
        if (P.global_column(p.col[k]) == column) values[k] += t.val[e];
    }
  }
}

namespace {

// The aggregates of `aggregate` (global numbers, -1: none) numbered locally in their global order:
// `distinct` lists them (sorted_distinct: one rank's aggregates lie close together), `local` gives each
// entry's number (-1: none).
struct LocalAggregates {
  std::vector<std::int64_t> distinct;
  Array<Index> local;
};
LocalAggregates number_locally(const Vector<std::int64_t>& aggregate) {
  LocalAggregates result;
  result.distinct = sorted_distinct(
      aggregate.size(), [&](std::size_t k) { return aggregate[k]; }, [&](std::size_t k) { return aggregate[k] >= 0; });
  const GhostNumbers number(result.distinct);
  result.local.assign(aggregate.size(), -1);
  for (std::size_t k = 0; k < aggregate.size(); ++k)
    if (aggregate[k] >= 0) result.local[k] = number(aggregate[k]);
  return result;
}

}  // namespace

template <class Value>
DistributedMatrix<Value> smoothed_prolongator(const MpiBackend& backend, const DistributedMatrix<Value>& A_f,
                                              const DistributedMatrix<Value>& T, double omega, SpgemmStats* stats) {
  const Communicator& comm = backend.comm();
  if (!(A_f.row_partition() == A_f.column_partition() && A_f.column_partition() == T.row_partition()))
    abort_every_rank("smoothed_prolongator: A_f's rows, its columns and T's rows are not in one partition");
  // Each local column's aggregate (global) and T's value: this rank's rows', then the ghosts' from their ranks.
  const CsrMatrix<Value>& t = T.local();
  const auto columns = static_cast<std::size_t>(A_f.local().cols);
  Vector<std::int64_t> aggregate(columns, -1);
  Vector<Value> weight(columns, Value(0));
  std::string problem;
  for (Index i = 0; i < t.rows; ++i) {
    if (t.row_length(i) > 1) problem = "smoothed_prolongator: the tentative prolongator has a row with several entries";
    if (t.row_length(i) != 1) continue;
    aggregate[static_cast<std::size_t>(i)] = T.global_column(t.col[t.row_begin(i)]);
    weight[static_cast<std::size_t>(i)] = t.val[t.row_begin(i)];
  }
  if (const std::string first = comm.first_problem(problem); !first.empty()) throw Error(first);
  A_f.fill_ghosts(aggregate);
  A_f.fill_ghosts(weight);
  // T over A_f's local columns, its columns the aggregates numbered locally in global order: P's row i sorted
  // by local number is sorted by global number.
  LocalAggregates numbered = number_locally(aggregate);
  CsrMatrix<Value> T_columns(static_cast<Index>(columns), static_cast<Index>(numbered.distinct.size()));
  for (std::size_t k = 0; k < columns; ++k) {
    T_columns.row_ptr[k + 1] = T_columns.row_ptr[k] + (numbered.local[k] >= 0 ? 1 : 0);
    if (numbered.local[k] < 0) continue;
    T_columns.col.push_back(numbered.local[k]);
    T_columns.val.push_back(weight[k]);
  }
  CsrMatrix<Value> P = smoothed_prolongator(CpuBackend{}, A_f.local(), T_columns, omega, stats);
  if (stats) {
    stats->multiplications = comm.sum(stats->multiplications);
    stats->nnz = comm.sum(static_cast<std::int64_t>(P.nnz()));
    stats->symbolic_seconds = comm.max(stats->symbolic_seconds);
    stats->numeric_seconds = comm.max(stats->numeric_seconds);
  }
  return DistributedMatrix<Value>(comm, A_f.row_partition(), T.column_partition(), std::move(P), numbered.distinct);
}

template <class Value>
double gershgorin_bound_dinv_a(const MpiBackend& backend, const DistributedMatrix<Value>& A) {
  return backend.comm().max(gershgorin_bound_dinv_a(A.local()));
}

template <class Value>
Vector<double> inverse_sqrt_diagonal(const MpiBackend&, const DistributedMatrix<Value>& A) {
  return A.with_ghosts(inverse_sqrt(A.diagonal(), A.first_row()));  // the ghost columns' too, once
}

Vector<double> seeded_vector(const MpiBackend& backend, Index n, std::uint64_t seed) {
  const std::int64_t first = backend.comm().sum_before(n);
  Vector<double> v(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(first + i)) - 0.5;
  return v;
}

void lanczos_rescale(const MpiBackend& backend, const Vector<double>& src, double divisor, Vector<double>& v) {
  lanczos_rescale(backend.local(), src, divisor, v);
}

template <class Value>
double lanczos_product(const MpiBackend& backend, const DistributedMatrix<Value>& A, const Vector<double>& scale,
                       double beta, const Vector<double>& v_prev, const Vector<double>& v, Vector<double>& w,
                       Vector<double>& scaled, std::int64_t block) {
  return backend.comm().sum(
      lanczos_product_partial(A.local(), scale, A.with_ghosts(v), beta, v_prev, v, w, scaled, block));
}

double lanczos_orthogonalize(const MpiBackend& backend, double alpha, const Vector<double>& v, Vector<double>& w,
                             std::int64_t block) {
  return backend.comm().sum(lanczos_orthogonalize_partial(alpha, v, w, block));
}

#define AMGSOLVE_DISTRIBUTED_SETUP(V)                                                                                 \
  template MpiStrength<V> strength_of_connection(const MpiBackend&, const DistributedMatrix<V>&, double);             \
  template double strength_drift(const MpiBackend&, const DistributedMatrix<V>&, double, const Strength&, Index);    \
  template DistributedMatrix<V> filtered_matrix(const MpiBackend&, const DistributedMatrix<V>&, const MpiStrength<V>&, \
                                                const Vector<double>&, Array<std::uint8_t>*, IsolatedRows);           \
  template Aggregates mis2_aggregation(const MpiBackend&, const MpiStrength<V>&, std::uint64_t);                      \
  template DistributedMatrix<V> tentative_prolongation(const MpiBackend&, const Aggregates&, const Vector<double>&,    \
                                                       Vector<double>&);                                              \
  template RowSum largest_relative_row_sum(const MpiBackend&, const DistributedMatrix<V>&);                           \
  template void scale_and_add_tentative(const MpiBackend&, DistributedMatrix<V>&, const DistributedMatrix<V>&,         \
                                        const DistributedMatrix<V>&, double);                                         \
  template DistributedMatrix<V> smoothed_prolongator(const MpiBackend&, const DistributedMatrix<V>&,                   \
                                                     const DistributedMatrix<V>&, double, SpgemmStats*);             \
  template double gershgorin_bound_dinv_a(const MpiBackend&, const DistributedMatrix<V>&);                            \
  template Vector<double> inverse_sqrt_diagonal(const MpiBackend&, const DistributedMatrix<V>&);                      \
  template double lanczos_product(const MpiBackend&, const DistributedMatrix<V>&, const Vector<double>&, double,      \
                                  const Vector<double>&, const Vector<double>&, Vector<double>&, Vector<double>&,    \
                                  std::int64_t);
AMGSOLVE_DISTRIBUTED_SETUP(double)
AMGSOLVE_DISTRIBUTED_SETUP(float)
#undef AMGSOLVE_DISTRIBUTED_SETUP

}  // namespace amgsolve

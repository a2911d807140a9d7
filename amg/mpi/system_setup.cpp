#include "amg/mpi/system_setup.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "amg/improve_near_nullspace.hpp"
#include "amg/system_nullspace.hpp"
#include "amg/system_spectral_radius.hpp"
#include "common/error.hpp"

namespace amgsolve {

namespace {

// A value per own node, carried by each of its rows, over A's columns: a ghost column's is its node's on the
// rank that owns it. Collective.
template <class T, class Value>
Vector<T> node_values_by_column(const DistributedMatrix<Value>& A, const Array<Index>& node_ptr, const Vector<T>& of_node) {
  Vector<T> by_row(static_cast<std::size_t>(A.rows));
  for (std::size_t n = 0; n + 1 < node_ptr.size(); ++n)
    for (Index i = node_ptr[n]; i < node_ptr[n + 1]; ++i) by_row[i] = of_node[n];
  return A.with_ghosts(by_row);
}

// The nodes a rank's columns belong to: its own nodes, then the other ranks' its ghost columns belong to
// (in global order, as the ghost columns are), with each one's global number and diagonal block norm.
template <class Value>
NodeColumns node_columns(const MpiBackend& backend, const DistributedMatrix<Value>& A, const NearNullspace& level) {
  NodeColumns c;
  c.node_ptr = level.node_ptr;
  const Index own_nodes = level.nodes(), own = A.own_columns();
  const std::int64_t first_node = backend.comm().sum_before(own_nodes);
  c.node_of_column.assign(static_cast<std::size_t>(A.local().cols), -1);
  for (Index n = 0; n < own_nodes; ++n)
    for (Index i = level.node_ptr[n]; i < level.node_ptr[n + 1]; ++i) c.node_of_column[i] = n;
  Vector<std::int64_t> global_of_own(static_cast<std::size_t>(own_nodes));
  for (Index n = 0; n < own_nodes; ++n) global_of_own[n] = first_node + n;
  const Vector<std::int64_t> global_by_column = node_values_by_column(A, level.node_ptr, global_of_own);
  c.global_node.assign(global_of_own.begin(), global_of_own.end());
  for (Index j = own; j < A.local().cols; ++j) {  // ghost columns: sorted, so each node's are consecutive
    if (j == own || global_by_column[j] != global_by_column[j - 1]) c.global_node.push_back(global_by_column[j]);
    c.node_of_column[j] = static_cast<Index>(c.global_node.size()) - 1;
  }
  c.nodes_with_ghosts = static_cast<Index>(c.global_node.size());
  const Vector<double> own_norms = diagonal_block_norms(A.local(), level.node_ptr, c.node_of_column);
  const Vector<double> norm_by_column = node_values_by_column(A, level.node_ptr, own_norms);
  c.node_norms.assign(own_norms.begin(), own_norms.end());
  c.node_norms.resize(static_cast<std::size_t>(c.nodes_with_ghosts));
  for (Index j = own; j < A.local().cols; ++j) c.node_norms[c.node_of_column[j]] = norm_by_column[j];
  return c;
}

// The nodes' graph of a rank: its ghosts are the ghost nodes, whose values come through A's halo, each
// carried by the node's rows.
template <class Value>
class NodeHaloLayout final : public GraphLayout {
 public:
  NodeHaloLayout(const Communicator& comm, const DistributedMatrix<Value>& A, const NodeColumns& nodes)
      : comm_(comm), A_(A), nodes_(nodes), first_(comm.sum_before(own())) {}
  std::int64_t first_node() const override { return first_; }
  Index ghosts() const override { return nodes_.nodes_with_ghosts - own(); }
  void fill_ghosts(Array<std::uint64_t>& values) const override { fill(values); }
  void fill_ghosts(Array<Index>& values) const override { fill(values); }
  std::int64_t sum(std::int64_t count) const override { return comm_.sum(count); }
  std::int64_t sum_before(std::int64_t count) const override { return comm_.sum_before(count); }

 private:
  Index own() const { return static_cast<Index>(nodes_.node_ptr.size()) - 1; }
  template <class T>
  void fill(Array<T>& values) const {
    Vector<T> of_node(values.begin(), values.begin() + own());
    const Vector<T> by_column = node_values_by_column(A_, nodes_.node_ptr, of_node);
    for (Index j = A_.own_columns(); j < A_.local().cols; ++j) values[nodes_.node_of_column[j]] = by_column[j];
  }

  const Communicator& comm_;
  const DistributedMatrix<Value>& A_;
  const NodeColumns& nodes_;
  std::int64_t first_;
};

// How a rank's rows join the others' in the search for a system's nullspace (amg/system_nullspace.hpp).
class RankRows final : public SystemRows {
 public:
  RankRows(const MpiBackend& backend, const DistributedMatrix<double>& A) : backend_(backend), A_(A) {}
  double sum(const ExactSum& partial) const override { return backend_.comm().sum(partial); }
  double max(double value) const override { return backend_.comm().max(value); }
  std::int64_t first_row() const override { return A_.first_row(); }
  WorstRow worst(WorstRow mine) const override {
    const Communicator::Located found = backend_.comm().first_of_largest(mine.row, mine.relative);
    return found.index < 0 ? WorstRow{} : WorstRow{found.index, found.value};
  }
  const NearNullspace& columns(const NearNullspace& B, NearNullspace& scratch) const override {
    scratch.vectors = B.vectors;
    rows_over_columns(A_, B.values, B.vectors, scratch.values);
    return scratch;
  }
  Index connected_components(const CsrMatrix<double>& /*A: this rank's rows of A_*/,
                             const Array<Index>& node_ptr) const override {
    return amgsolve::connected_components(backend_, A_, &node_ptr);
  }

 private:
  const MpiBackend& backend_;
  const DistributedMatrix<double>& A_;
};

// How a rank's part of a system's Lanczos estimate joins the others' (amg/system_spectral_radius.hpp).
template <class Value>
class RankPart {
 public:
  RankPart(const MpiBackend& backend, const DistributedMatrix<Value>& A) : comm_(backend.comm()), A_(A) {}
  double sum(const ExactSum& partial) const { return comm_.sum(partial); }
  std::int64_t first_row() const { return A_.first_row(); }
  std::int64_t rows_everywhere(Index /*rows*/) const { return A_.global_rows(); }
  void fill_ghosts(Vector<double>& columns) const { A_.fill_ghosts(columns); }
  void require_none(const std::string& problem) const {
    if (const std::string first = comm_.first_problem(problem); !first.empty()) throw NumericalError(first);
  }

 private:
  const Communicator& comm_;
  const DistributedMatrix<Value>& A_;
};

// B's rows as one rank sends them to the owner of their aggregate: each row's aggregate and global number,
// and its k values.
struct RowsToOwners {
  std::vector<std::vector<std::int64_t>> keys;  // per rank: aggregate, global row, ...
  std::vector<std::vector<double>> values;      // per rank: k values a row
  std::vector<std::vector<Index>> rows;         // per rank: the local rows sent, in order
};

// What an owner sends back for each row it received: its T row's first coarse column and length, and the
// values (Q_a's row at the row's place in the aggregate).
struct QRows {
  std::vector<std::vector<std::int64_t>> columns;  // per rank: first column, count, ...
  std::vector<std::vector<double>> values;
};

// The owner's side: each of its aggregates' rows gathered in global order (the ranks send theirs in row
// order, rank by rank), factorised, and their Q rows sent back; the coarse level's nodes into `coarse`.
QRows factor_owned_aggregates(const Communicator& comm, const BlockPartition& owners, int k,
                              const std::vector<std::vector<std::int64_t>>& keys,
                              const std::vector<std::vector<double>>& values, NearNullspace& coarse) {
  const std::int64_t first_aggregate = owners.begin(comm.rank());
  const auto owned = static_cast<Index>(owners.count(comm.rank()));
  // All received rows in one buffer (k values each), and each aggregate's members in order.
  std::vector<double> rows_values;
  std::vector<std::vector<Index>> members(static_cast<std::size_t>(owned));
  std::vector<std::int64_t> last_row(static_cast<std::size_t>(owned), -1);  // each aggregate's, to check the order
  for (std::size_t r = 0; r < keys.size(); ++r)
    for (std::size_t e = 0; e < keys[r].size() / 2; ++e) {
      const auto a = static_cast<std::size_t>(keys[r][2 * e] - first_aggregate);
      const std::int64_t row = keys[r][2 * e + 1];
      if (row <= last_row[a])  // the QR must see one process's order, or its bits differ
        abort_every_rank("aggregate QR: row " + std::to_string(row) + " arrived after row " + std::to_string(last_row[a]));
      last_row[a] = row;
      members[a].push_back(static_cast<Index>(rows_values.size() / static_cast<std::size_t>(k)));
      rows_values.insert(rows_values.end(), values[r].begin() + static_cast<std::ptrdiff_t>(e * k),
                         values[r].begin() + static_cast<std::ptrdiff_t>((e + 1) * k));
    }
  // Q_a of every aggregate one after the other (q_first[a]: where Q_a starts), allocated before the parallel
  // region, where running out of memory is an exception rather than the end of the process.
  std::vector<std::size_t> q_first(static_cast<std::size_t>(owned) + 1, 0);
  for (Index a = 0; a < owned; ++a) q_first[a + 1] = q_first[a] + members[a].size() * static_cast<std::size_t>(k);
  std::vector<double> q(q_first.back());
  std::vector<double> r(static_cast<std::size_t>(owned) * k * k, 0.0);
  std::vector<Index> first_column(static_cast<std::size_t>(owned) + 1, 0);
#pragma omp parallel for schedule(dynamic, 256)
  for (Index a = 0; a < owned; ++a)
    first_column[a + 1] = factor_aggregate(rows_values.data(), k, members[a].data(), static_cast<Index>(members[a].size()),
                                           q.data() + q_first[a], r.data() + static_cast<std::size_t>(a) * k * k);
  for (Index a = 0; a < owned; ++a) first_column[a + 1] += first_column[a];
  coarse = coarse_near_nullspace(k, first_column, r);
  const std::int64_t first_coarse_row = comm.sum_before(first_column.back());

  // Back to the senders, in the order they sent: each row's place in its aggregate is its rank among the
  // members, which were appended in that order.
  QRows back{std::vector<std::vector<std::int64_t>>(keys.size()), std::vector<std::vector<double>>(keys.size())};
  std::vector<Index> place(static_cast<std::size_t>(owned), 0);
  for (std::size_t s = 0; s < keys.size(); ++s)
    for (std::size_t e = 0; e < keys[s].size() / 2; ++e) {
      const auto a = static_cast<Index>(keys[s][2 * e] - first_aggregate);
      const Index m = static_cast<Index>(members[a].size()), p = place[a]++, kept = first_column[a + 1] - first_column[a];
      back.columns[s].push_back(first_coarse_row + first_column[a]);
      back.columns[s].push_back(kept);
      for (Index c = 0; c < kept; ++c) back.values[s].push_back(q[q_first[a] + static_cast<std::size_t>(c) * m + p]);
    }
  return back;
}

// Every own row to the owner of its aggregate, in row order (its aggregate, its global number, its k values),
// and every own row's aggregate into row_aggregates.
RowsToOwners rows_to_owners(const Communicator& comm, const Aggregates& node_aggregates, const NearNullspace& B,
                            const BlockPartition& owners, const BlockPartition& fine_rows, Array<Index>& row_aggregates) {
  const int k = B.vectors;
  const auto ranks = static_cast<std::size_t>(comm.size());
  RowsToOwners sent{std::vector<std::vector<std::int64_t>>(ranks), std::vector<std::vector<double>>(ranks),
                    std::vector<std::vector<Index>>(ranks)};
  row_aggregates.assign(static_cast<std::size_t>(B.rows()), kNotAggregated);
  for (Index n = 0; n < B.nodes(); ++n) {
    const Index a = node_aggregates.id[n];
    for (Index i = B.node_ptr[n]; i < B.node_ptr[n + 1]; ++i) {
      row_aggregates[i] = a;
      if (a == kNotAggregated) continue;
      const auto r = static_cast<std::size_t>(owners.owner(a));
      sent.keys[r].push_back(a);
      sent.keys[r].push_back(fine_rows.begin(comm.rank()) + i);
      sent.values[r].insert(sent.values[r].end(), B.values.begin() + static_cast<std::ptrdiff_t>(i) * k,
                            B.values.begin() + static_cast<std::ptrdiff_t>(i + 1) * k);
      sent.rows[r].push_back(i);
    }
  }
  return sent;
}

// T's rows from the owners' answers: row i of aggregate a holds its row of Q_a in a's coarse columns (the
// answers in the order the rows were sent, rank by rank).
template <class Value>
CsrMatrix<Value> rows_of_q(const std::vector<std::vector<Index>>& sent_rows, const QRows& received, Index rows,
                           std::int64_t coarse_rows) {
  CsrMatrix<Value> T(rows, static_cast<Index>(coarse_rows));
  std::vector<std::int64_t> first(static_cast<std::size_t>(rows), 0);
  std::vector<std::size_t> at(static_cast<std::size_t>(rows), 0);
  for (std::size_t r = 0; r < sent_rows.size(); ++r) {
    std::size_t cursor = 0;
    for (std::size_t e = 0; e < sent_rows[r].size(); ++e) {
      const Index i = sent_rows[r][e];
      first[i] = received.columns[r][2 * e];
      T.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<Offset>(received.columns[r][2 * e + 1]);
      at[i] = cursor;
      cursor += static_cast<std::size_t>(received.columns[r][2 * e + 1]);
    }
  }
  allocate_from_row_lengths(T);
  for (std::size_t r = 0; r < sent_rows.size(); ++r)
    for (const Index i : sent_rows[r])
      for (Offset p = 0; p < T.row_end(i) - T.row_begin(i); ++p) {
        T.col[T.row_begin(i) + p] = static_cast<Index>(first[i] + p);
        T.val[T.row_begin(i) + p] = static_cast<Value>(received.values[r][at[i] + static_cast<std::size_t>(p)]);
      }
  return T;
}

}  // namespace

std::int64_t sum_over_ranks(const MpiBackend& backend, std::int64_t count) { return backend.comm().sum(count); }

template <class Value>
MpiNodeStrength<Value> node_strength(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                                     const NearNullspace& level, double theta) {
  MpiNodeStrength<Value> s;
  s.columns = node_columns(backend, A, level);
  NodeStrength local = node_strength(A.local(), s.columns, theta);
  s.nodes = std::move(local.nodes);
  s.rows.local = std::move(local.rows);
  s.rows.weak_entries = backend.comm().sum(static_cast<std::int64_t>(s.rows.local.weak_entries));
  s.rows.A = &A;
  return s;
}

template <class Value>
Aggregates node_aggregation(const MpiBackend& backend, const MpiNodeStrength<Value>& strength, std::uint64_t seed) {
  return mis2_aggregation(strength.nodes, seed, NodeHaloLayout<Value>(backend.comm(), *strength.rows.A, strength.columns));
}

template <class Value>
DistributedMatrix<Value> tentative_prolongation(const MpiBackend& backend, const Aggregates& node_aggregates,
                                                const NearNullspace& B, NearNullspace& coarse,
                                                Array<Index>& row_aggregates) {
  const Communicator& comm = backend.comm();
  // An aggregate makes at most k coarse rows (k the vectors, every rank's alike): a level of fewer than
  // kCoarseRowsPerRank rows a rank gathers onto fewer ranks, as a scalar one does.
  const auto k = static_cast<std::int64_t>(comm.max(static_cast<double>(std::max(B.vectors, 1))));
  const BlockPartition owners =
      coarse_partition(comm, node_aggregates.count, node_aggregates.mis2_roots, (kCoarseRowsPerRank + k - 1) / k);
  const BlockPartition fine_rows = comm.partition_of(B.rows());
  const RowsToOwners sent = rows_to_owners(comm, node_aggregates, B, owners, fine_rows, row_aggregates);
  QRows back;
  {
    std::vector<std::vector<std::int64_t>> keys;
    std::vector<std::vector<double>> values;
    all_to_all(comm, sent.keys, keys);
    all_to_all(comm, sent.values, values);
    back = factor_owned_aggregates(comm, owners, B.vectors, keys, values, coarse);
  }
  QRows received;
  all_to_all(comm, back.columns, received.columns);
  all_to_all(comm, back.values, received.values);
  back = {};
  CsrMatrix<Value> T = rows_of_q<Value>(sent.rows, received, B.rows(), comm.sum(coarse.rows()));
  return DistributedMatrix<Value>(comm, fine_rows, comm.partition_of(coarse.rows()), std::move(T));
}

template <class Value>
double system_spectral_radius(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                              std::shared_ptr<const Array<Index>> blocks, const NearNullspace& level, int steps,
                              std::uint64_t seed) {
  return system_max_eigenvalue(A.local(), std::move(blocks), level, steps, seed, RankPart<Value>(backend, A));
}

template <class Value>
double system_gershgorin_bound(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                               std::shared_ptr<const Array<Index>> blocks) {
  if (!blocks) return gershgorin_bound_dinv_a(backend, A);
  std::vector<std::int64_t> global_columns(static_cast<std::size_t>(A.local().cols));
  for (Index j = 0; j < A.local().cols; ++j) global_columns[static_cast<std::size_t>(j)] = A.global_column(j);
  std::string problem;
  double bound = 0.0;
  try {
    bound = gershgorin_bound_block_dinv_a(A.local(), std::move(blocks), &global_columns, A.first_row());
  } catch (const NumericalError& e) {
    problem = e.what();
  }
  RankPart<Value>(backend, A).require_none(problem);
  return backend.comm().max(bound);
}

template <class Value>
void improve_near_nullspace(const MpiBackend&, const DistributedMatrix<Value>& A,
                            std::shared_ptr<const Array<Index>> nodes, double omega, int sweeps, NearNullspace& B) {
  const GhostRows ghost_rows = [&A](const Vector<double>& own, int k, Vector<double>& columns) {
    rows_over_columns(A, own, k, columns);
  };
  improve_near_nullspace(A.local(), std::move(nodes), omega, sweeps, B, ghost_rows);
}

template <class Value>
NearNullspace finest_near_nullspace(const MpiBackend& backend, const DistributedMatrix<Value>& A, int block_size,
                                    const NearNullspaceVectors& given) {
  // The vectors whole, this rank's part cut from them, or (a program that holds no whole vector) this rank's
  // rows of them, told apart by their length; checked either way, the first rank's problem every rank's.
  const auto k = static_cast<std::size_t>(std::max(given.count, 0));
  const bool rows_given = near_nullspace_given_by_rows(given, A.rows, A.global_rows());
  const std::string problem = rank_near_nullspace_problem(A.rows, A.global_rows(), block_size, given);
  if (const std::string first = backend.comm().first_problem(problem); !first.empty())
    throw InputError(first);
  const auto first = static_cast<Index>(A.first_row());
  const bool whole_blocks = first % block_size == 0 && (first / block_size) % kReductionBlock == 0;
  if ((A.rows > 0 && !whole_blocks) || A.rows % block_size != 0)
    abort_every_rank("a system's finest rows " + std::to_string(first) + " + " + std::to_string(A.rows) +
                     " on this rank are not whole blocks of " + std::to_string(kReductionBlock) + " nodes");
  NearNullspaceVectors mine = given;
  if (k > 0 && !rows_given) {
    mine.values = std::make_shared<const Vector<double>>(given.values->begin() + static_cast<std::ptrdiff_t>(first * k),
                                                         given.values->begin() + static_cast<std::ptrdiff_t>((first + A.rows) * k));
  }
  std::vector<double> largest = mine.values && mine.count > 0 ? largest_entries(*mine.values, mine.count)
                                                              : std::vector<double>{};
  for (double& l : largest) l = backend.comm().max(l);  // each vector scaled alike on every rank
  return finest_near_nullspace(A.rows, block_size, mine, &largest);
}

NearNullspace whole_near_nullspace(const MpiBackend& backend, const NearNullspace& level) {
  const Communicator& comm = backend.comm();
  NearNullspace whole;
  whole.vectors = static_cast<int>(comm.max(level.vectors));  // a rank without rows holds none
  comm.allgather(level.values, comm.partition_of(static_cast<std::int64_t>(level.values.size())), whole.values);
  whole.node_ptr = {0, static_cast<Index>(whole.values.size() / static_cast<std::size_t>(whole.vectors))};
  return whole;
}

void resolve_system_nullspace(const MpiBackend& backend, const DistributedMatrix<double>& A, AmgParams& params) {
  const SystemNullspace resolved =
      resolve_system_nullspace(A.local(), finest_near_nullspace(backend, A, params.block_size, params.near_nullspace),
                               params.nullspace, RankRows(backend, A));
  params.nullspace = resolved.choice;
  params.nullspace_combinations = resolved.combinations;
}

#define AMGSOLVE_SYSTEM_SETUP(V)                                                                                      \
  template MpiNodeStrength<V> node_strength(const MpiBackend&, const DistributedMatrix<V>&, const NearNullspace&,      \
                                            double);                                                                  \
  template Aggregates node_aggregation(const MpiBackend&, const MpiNodeStrength<V>&, std::uint64_t);                  \
  template DistributedMatrix<V> tentative_prolongation(const MpiBackend&, const Aggregates&, const NearNullspace&,     \
                                                       NearNullspace&, Array<Index>&);                                \
  template double system_spectral_radius(const MpiBackend&, const DistributedMatrix<V>&,                              \
                                         std::shared_ptr<const Array<Index>>, const NearNullspace&, int,              \
                                         std::uint64_t);                                                              \
  template double system_gershgorin_bound(const MpiBackend&, const DistributedMatrix<V>&,                             \
                                          std::shared_ptr<const Array<Index>>);                                       \
  template void improve_near_nullspace(const MpiBackend&, const DistributedMatrix<V>&,                                \
                                       std::shared_ptr<const Array<Index>>, double, int, NearNullspace&);             \
  template NearNullspace finest_near_nullspace(const MpiBackend&, const DistributedMatrix<V>&, int,                   \
                                               const NearNullspaceVectors&);
AMGSOLVE_SYSTEM_SETUP(double)
AMGSOLVE_SYSTEM_SETUP(float)
#undef AMGSOLVE_SYSTEM_SETUP

}  // namespace amgsolve

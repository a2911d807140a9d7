#pragma once
// A system's steps (amg/system_setup.hpp) on the mpi backend: the overloads taking an MpiBackend of the
// functions smoothed aggregation calls for a level whose rows are grouped in nodes. Each rank owns whole
// nodes: the finest level's in ranges of kReductionBlock nodes (node_partition_unit), a coarse level's about
// as the aggregates of the level above fall to the ranks (kAggregateBlock aggregates at a time), so each rank's
// rows are whole reduction blocks of its level (NearNullspace::reduction_blocks) and every rank count sums
// as one process does. What a rank reads of another's nodes (a ghost node's number, diagonal block norm or
// MIS-2 tuple, another rank's rows of B) comes through the level matrix's halo, a node's value carried by
// each of its rows; the QR of an aggregate whose nodes lie on several ranks runs on the rank that owns the
// aggregate, over its rows in global order. So the hierarchy, level by level and bit for bit, is the
// single-process one for any rank count (tests/test_mpi.cpp).
#include <cstdint>
#include <memory>

#include "amg/mpi/distributed_setup.hpp"
#include "amg/system_setup.hpp"
#include "backend/mpi/mpi_backend.hpp"

namespace amgsolve {

template <>
struct SetsUpSystems<MpiBackend> : std::true_type {};

// Step 1 on a rank's nodes: the nodes' graph, whose adjacency names own nodes and ghost nodes (numbered after
// the own ones, in global order), and the rows' strength as the filtered matrix reads it.
template <class Value>
struct MpiNodeStrength {
  StrengthGraph nodes;
  MpiStrength<Value> rows;
  NodeColumns columns;  // how the rank's columns map to nodes: what MIS-2 reads of the ghost nodes
};
template <class Value>
MpiNodeStrength<Value> node_strength(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                                     const NearNullspace& level, double theta);
// Step 2: MIS-2 on the nodes' graph, the ghost nodes' tuples through A's halo (ids global, count all ranks').
template <class Value>
Aggregates node_aggregation(const MpiBackend& backend, const MpiNodeStrength<Value>& strength, std::uint64_t seed);
// Step 3: T by the QR of each aggregate on the rank that owns it (coarse_partition, in
// amg/mpi/distributed_setup.hpp), its rows sent there and Q's rows back; `coarse` receives the rank's nodes of
// the coarse level (its aggregates'), row_aggregates each own row's aggregate. T's columns are partitioned as
// the coarse level's rows. Collective.
template <class Value>
DistributedMatrix<Value> tentative_prolongation(const MpiBackend& backend, const Aggregates& node_aggregates,
                                                const NearNullspace& B, NearNullspace& coarse,
                                                Array<Index>& row_aggregates);
std::int64_t sum_over_ranks(const MpiBackend& backend, std::int64_t count);

// rho(D^-1 A) on the level (amg/system_spectral_radius.hpp), the reductions summed over the ranks.
template <class Value>
double system_spectral_radius(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                              std::shared_ptr<const Array<Index>> blocks, const NearNullspace& level, int steps,
                              std::uint64_t seed);
template <class Value>
double system_gershgorin_bound(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                               std::shared_ptr<const Array<Index>> blocks);
// The finest near-nullspace relaxed (amg/improve_near_nullspace.hpp), the ghost rows of B through A's halo.
template <class Value>
void improve_near_nullspace(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                            std::shared_ptr<const Array<Index>> nodes, double omega, int sweeps, NearNullspace& B);

// amg.nullspace of a system found on the ranks' rows (amg/system_nullspace.hpp: the Gram matrices summed
// over the ranks, B's ghost rows through A's halo), into params, the same on every rank as on one process.
// Collective.
void resolve_system_nullspace(const MpiBackend& backend, const DistributedMatrix<double>& A, AmgParams& params);

// The level's near-nullspace gathered on every rank (the coarsest level's, for its pseudo-inverse). Collective.
NearNullspace whole_near_nullspace(const MpiBackend& backend, const NearNullspace& level);

// This rank's part of the finest level's near-nullspace (finest_near_nullspace of the whole): its rows' nodes
// and vectors, from the given vectors whole on every rank or each rank's rows of them. Collective.
template <class Value>
NearNullspace finest_near_nullspace(const MpiBackend& backend, const DistributedMatrix<Value>& A, int block_size,
                                    const NearNullspaceVectors& given);

}  // namespace amgsolve

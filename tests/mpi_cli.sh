#!/usr/bin/env bash
# The program under mpirun (ctest label `mpi`): the same iterations, residual history and VTK file (where
# the build has VTK) on 1 and N ranks for a Poisson problem, its time steps, the mouse, the elasticity
# cantilever (a system) and a Matrix Market matrix (with three right-hand sides too, and as a system), only
# rank 0 writing; bad input, an output only rank 0 can find unwritable, and errors only some ranks meet, end
# every rank with one error line and a non-zero exit, never a hang (ctest's timeout would catch one). The
# one-process runs are made once, by the `reference` mode (the ctest fixture MpiCli.OneProcess), and
# compared with by every rank count:
#   mpi_cli.sh reference AMGSOLVE SOURCE_DIR REFERENCE_DIR
#   mpi_cli.sh ranks MPIRUN AMGSOLVE SOURCE_DIR REFERENCE_DIR WORK_DIR RANKS
set -uo pipefail
mode="$1"
case "$mode" in
  reference) mpirun="" amgsolve="$2" source="$3" reference="$4" work="$4" ranks=1 ;;
  ranks) mpirun="$2" amgsolve="$3" source="$4" reference="$5" work="$6" ranks="$7" ;;
  *) echo "mpi_cli.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
rm -rf "$work" && mkdir -p "$work" || exit 1
# The inputs and the one-process outputs lie in the reference folder; a rank count's runs read from there
# (relative paths, so that the error lines name the files as one process does) and write into its own.
cd "$reference" || exit 1
if [ "$mode" = ranks ]; then
  for f in one.json atol-one.json small-one.json steps-one.json mouse-one.json general-one.json elastic-one.json; do
    [ -f "$f" ] || { echo "FAIL: $reference/$f is missing: run the fixture MpiCli.OneProcess first"; exit 1; }
  done
fi
run() { "$mpirun" -np "$1" --oversubscribe --bind-to none "${@:2}"; }
# A build without VTK (the GPU machine's) writes no .vti: the VTK files are then left out of the comparisons.
vtk=0
version="$("$amgsolve" --version)"
grep -q "VTK:  built in" <<<"$version" && vtk=1
[ "$vtk" = 1 ] || echo "this amgsolve is built without VTK: the VTK files are not compared"
vtk_output() { vtk_args=(); [ "$vtk" = 0 ] || vtk_args=(--vtk "$1"); }  # the option, where the program writes one
failed=0
fail() { echo "FAIL: $*"; failed=1; }
one() { [ "$mode" = reference ]; }  # the one-process half of each comparison
many() { [ "$mode" = ranks ]; }     # the rank count's half and the comparison
# run_both NAME WHAT ARGS...: amgsolve ARGS on one process (NAME-one.json and .vti in the reference folder)
# or on the rank count (NAME-many.* in its work folder), quietly; WHAT names it in a failure.
run_both() {
  local name="$1" what="$2"
  shift 2
  if one; then
    vtk_output "$name-one.vti"
    "$amgsolve" "$@" --report "$name-one.json" "${vtk_args[@]}" --quiet || fail "$what, one process"
  else
    vtk_output "$work/$name-many.vti"
    run "$ranks" "$amgsolve" "$@" --report "$work/$name-many.json" "${vtk_args[@]}" --quiet ||
      fail "$what, $ranks ranks"
  fi
}

config="$source/configs/poisson-jump2d.yaml"
if one; then
  vtk_output one.vti
  "$amgsolve" "$config" --set problem.size=[300,260] --report one.json "${vtk_args[@]}" --quiet || fail "one process"
else
  vtk_output "$work/many.vti"
  run "$ranks" "$amgsolve" "$config" --set problem.size=[300,260] --report "$work/many.json" "${vtk_args[@]}" \
    --quiet || fail "$ranks ranks"
  python3 - one.json "$work/many.json" "$ranks" <<'PY' || fail "reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
ranks = int(sys.argv[3])
assert many["ranks"] == ranks, many["ranks"]
assert one["solve"]["iterations"] == many["solve"]["iterations"], "iterations"
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
table = lambda r: [(l["rows"], l["nnz"], l.get("aggregates"), l.get("rho_dinv_a"), l["smoother"]) for l in r["setup"]["levels"]]
assert table(one) == table(many), "hierarchy (built on the ranks' rows)"
assert one["setup"]["operator_complexity"] == many["setup"]["operator_complexity"]
assert many["problem"]["assembled_by_rows"] == (ranks > 1), "each rank assembles only its rows"
assert one["problem"]["row_length_histogram"] == many["problem"]["row_length_histogram"]
for part in ("setup", "solve"):
    per_rank = many[part].get("per_rank", [])
    assert len(per_rank) == (ranks if ranks > 1 else 0), per_rank
    assert sum(r["rows"] for r in per_rank) == (many["problem"]["rows"] if ranks > 1 else 0)
    assert ranks == 1 or sum(r["halo_bytes"] for r in per_rank) > 0, part + ": nothing sent"
# On several ranks the setup's products by rows give their phases, the fetch sending the rows others read.
rap = many["setup"]["levels"][0]["spgemm"]["rap"]
assert [p["name"] for p in rap.get("phases", [])] == (["fetch B rows", "local multiply"] if ranks > 1 else []), rap
assert ranks == 1 or rap["phases"][0]["bytes"] > 0, rap["phases"]
PY
  [ "$vtk" = 0 ] || cmp -s one.vti "$work/many.vti" || fail "the VTK files differ"
fi

# An absolute tolerance: ||b|| summed over the ranks' rows, the same relative tolerance held, the same history.
atol=(--set problem.size=[300,260] --set solver.tolerance=1e-12 --set solver.absolute_tolerance=1e-2 --quiet)
if one; then
  "$amgsolve" "$config" "${atol[@]}" --report atol-one.json --vtk '' || fail "absolute tolerance, one process"
else
  run "$ranks" "$amgsolve" "$config" "${atol[@]}" --report "$work/atol-many.json" --vtk '' ||
    fail "absolute tolerance, $ranks ranks"
  python3 - atol-one.json "$work/atol-many.json" <<'PY' || fail "absolute tolerance reports differ"
import json, sys
one, many = (json.load(open(f))["solve"] for f in sys.argv[1:3])
assert one["effective_tolerance"] == many["effective_tolerance"] > 1e-12, (one["effective_tolerance"], many["effective_tolerance"])
assert one["history"] == many["history"] and one["converged"] and many["converged"]
PY
fi

# A manufactured solution (poisson-small.yaml at 32 x 32 x 8: 4 blocks of 2048 rows, so that 8 ranks leave 4
# without any): each rank holds its rows of b, u* and x, the error against u* is summed over them and the VTK
# file of x, b, u* and the error is gathered on rank 0, all as one process's.
run_both small manufactured "$source/configs/poisson-small.yaml" --set "problem.size=[32,32,8]"
if many; then
  python3 - small-one.json "$work/small-many.json" <<'PY' || fail "manufactured reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
assert 0 < one["solve"]["relative_error"] == many["solve"]["relative_error"], "error against u*"
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1)
PY
  [ "$vtk" = 0 ] || cmp -s small-one.vti "$work/small-many.vti" || fail "the manufactured VTK files differ"
fi

# Time steps on one pattern: each rank assembles its rows at every step and re-sets up from them (the
# aggregates kept, the products by their numeric phase after the rows are fetched): every step's history is
# one process's.
steps=("$source/configs/poisson-steps.yaml" --set problem.size=[32,32,32] --set problem.steps=3 --quiet)
if one; then
  "$amgsolve" "${steps[@]}" --report steps-one.json || fail "steps, one process"
else
  run "$ranks" "$amgsolve" "${steps[@]}" --report "$work/steps-many.json" || fail "steps, $ranks ranks"
  python3 - steps-one.json "$work/steps-many.json" <<'PY' || fail "steps reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert len(one["steps"]) == len(many["steps"]) == 3
for a, b in zip(one["steps"], many["steps"]):
    assert a["reused"] == b["reused"] == (a["step"] > 1), (a["setup_note"], b["setup_note"])
    assert a["iterations"] == b["iterations"] and a["history"] == b["history"], "step %d" % a["step"]
# The last re-setup's sample of each level's couplings: the ranks' counts add up to one process's share.
drift = lambda r: [l.get("strength_drift") for l in r["setup"]["levels"]]
assert drift(one) == drift(many) and drift(one)[0] is not None, (drift(one), drift(many))
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1), "each rank assembles only its rows"
PY
fi

# The mouse (many sources, one hierarchy, fluorescence) and a Matrix Market matrix: the same numbers.
mouse="$source/configs/mouse-quick.yaml"
run_both mouse mouse "$mouse" --set "problem.detectors=[[8,-4],[8,4]]"
if many; then
  python3 - mouse-one.json "$work/mouse-many.json" <<'PY' || fail "mouse reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert len(one["sources"]) == len(many["sources"]) > 1
for a, b in zip(one["sources"], many["sources"]):
    for band in ("excitation", "emission"):
        assert a[band]["iterations"] == b[band]["iterations"], band
        assert a[band]["relative_residual"] == b[band]["relative_residual"], band
    assert a["absorbed_power"] == b["absorbed_power"] and a["boundary_outflow"] == b["boundary_outflow"]
    assert len(a["detectors"]) == 2 and a["detectors"] == b["detectors"], "detectors (rank 0's, of the gathered fluences)"
assert one["solve"]["history"] == many["solve"]["history"]
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1), "each rank assembles only its rows"
assert one["problem"]["row_length_histogram"] == many["problem"]["row_length_histogram"]
assert one["problem"]["mouse"] == many["problem"]["mouse"]
PY
  [ "$vtk" = 0 ] || cmp -s mouse-one.vti "$work/mouse-many.vti" || fail "the mouse VTK files differ"
fi
# On 2 ranks (once; about 12 s): the mouse's SpGEMM comparison is written, the distributed backends in it
# agreeing with one process's product and saying where they ran, and its report has the ranks' loads.
if many && [ "$ranks" = 2 ]; then
  run 2 "$amgsolve" "$mouse" --set amg.compare_spgemm=true --set amg.compare_runs=1 \
    --set output.spgemm_csv="$work/mouse.csv" --report "$work/mouse-compare.json" --quiet || fail "mouse comparison"
  python3 - "$work/mouse.csv" "$work/mouse-compare.json" <<'PY' || fail "mouse comparison outputs"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
report = json.load(open(sys.argv[2]))
levels = len(report["setup"]["levels"]) - 1
for backend, where in (("rowwise", "on 2 ranks"), ("split3d", "grid 1x1x2 on 2 ranks")):
    mine = [r for r in rows if r["backend"] == backend]
    assert len(mine) == 3 * levels, (backend, len(mine), levels)
    assert all(r["agrees"] == "true" for r in mine), backend
    assert mine[0]["choice"] == where, (backend, mine[0]["choice"])
assert report["ranks"] == 2
for part in ("setup", "solve"):
    assert len(report[part]["per_rank"]) == 2, part
    assert sum(r["rows"] for r in report[part]["per_rank"]) == report["problem"]["rows"], part
PY
fi

# A system: the 2D cantilever (problem.type elasticity), 200 x 60 cells, its 12,200 nodes in six blocks of
# 2,048 nodes (a system's ranks hold whole blocks of nodes), so up to six ranks hold rows; each rank assembles
# only its nodes' rows. The same hierarchy (node blocks, rigid-body modes), history and VTK file.
elastic=("$source/configs/elasticity.yaml" --set "problem.box=[200,60]" --quiet)
if one; then
  vtk_output elastic-one.vti
  "$amgsolve" "${elastic[@]}" --report elastic-one.json "${vtk_args[@]}" || fail "elasticity, one process"
else
  vtk_output "$work/elastic-many.vti"
  run "$ranks" "$amgsolve" "${elastic[@]}" --report "$work/elastic-many.json" "${vtk_args[@]}" ||
    fail "elasticity, $ranks ranks"
  python3 - elastic-one.json "$work/elastic-many.json" <<'PY' || fail "elasticity reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["iterations"] == many["solve"]["iterations"] and one["solve"]["history"] == many["solve"]["history"]
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1), "each rank assembles its nodes' rows"
assert one["problem"]["nnz"] == many["problem"]["nnz"]
table = lambda r: [(l["rows"], l["nnz"], l.get("aggregates"), l.get("rho_dinv_a"), l["smoother"]) for l in r["setup"]["levels"]]
assert table(one) == table(many), "hierarchy (built on the ranks' nodes)"
assert one["setup"]["block_size"] == many["setup"]["block_size"] == 2
assert one["setup"]["near_nullspace_sweeps"] == many["setup"]["near_nullspace_sweeps"] > 0
PY
  [ "$vtk" = 0 ] || cmp -s elastic-one.vti "$work/elastic-many.vti" || fail "the elasticity VTK files differ"
fi

# bcsstk18 (11,948 rows: six reduction blocks, so up to six ranks hold rows) converges slowly: 40 iterations are
# compared, and both runs end with exit 3 (not converged), their outputs written.
matrix="${AMGSOLVE_MATRICES:-$source/../shared/matrices}/bcsstk18.mtx"
if [ ! -f "$matrix" ]; then
  echo "skipping the Matrix Market comparison: $matrix is absent"
elif one; then
  printf 'problem:\n  type: matrix_market\n  matrix: %s\n' "$matrix" > market.yaml
  "$amgsolve" market.yaml --set solver.max_iterations=40 --report market-one.json --quiet 2>/dev/null
  [ $? -eq 3 ] || fail "Matrix Market, one process: expected exit 3"
else
  run "$ranks" "$amgsolve" market.yaml --set solver.max_iterations=40 --report "$work/market-many.json" --quiet \
    2>/dev/null
  [ $? -eq 3 ] || fail "Matrix Market, $ranks ranks: expected exit 3"
  python3 - market-one.json "$work/market-many.json" <<'PY' || fail "Matrix Market reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["iterations"] == many["solve"]["iterations"] and one["solve"]["history"] == many["solve"]["history"]
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1), "rank 0 reads, every rank keeps its rows"
assert one["problem"]["row_length_histogram"] == many["problem"]["row_length_histogram"]
PY
fi

# A Matrix Market file is read on rank 0 and dealt out as it is read; the checks then run on the ranks'
# rows. A 2D Poisson matrix stored whole (general), 40,000 rows over twenty reduction blocks, so several
# ranks hold rows: it solves as on one process, and each broken copy gives one process's error line,
# exit 1: an asymmetric pair split between two ranks' rows (rows 20,400 and 20,600 of 0, about the first
# boundary of 2 and of 4 ranks, 20,480), a duplicate entry, a zero and a subnormal
# diagonal entry past the first rank, a bad value on the last line, and a singular matrix (a graph Laplacian, rows summing to
# zero) whose b = 1 is inconsistent with it (refused before the setup on the ranks too, in the same words).
broken_files=(asymmetric duplicate zero-diagonal subnormal-diagonal bad-value singular)
if one; then
  python3 - <<'PY'
n = 200
entries = []
for y in range(n):
    for x in range(n):
        i = y * n + x + 1
        entries.append((i, i, 4.0))
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= x + dx < n and 0 <= y + dy < n:
                entries.append((i, (y + dy) * n + x + dx + 1, -1.0))
def write(name, rows):
    with open(name, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (n * n, n * n, len(rows)))
        f.writelines("%d %d %r\n" % e for e in rows)
write("general.mtx", entries)
# Round-off of an assembly: a pair of 1e-17 entries that differ in every digit, between rows on the first and
# the last rank, measured against both rows' diagonals: the matrix scaled as D A D with D 1e-8 in row 1 and
# 1e8 in the last, so that a_11 or a_NN alone would make the pair an asymmetry.
scale = {1: 1e-8, n * n: 1e8}
write("noisy.mtx", [(i, j, v * scale.get(i, 1.0) * scale.get(j, 1.0)) for i, j, v in entries] +
      [(1, n * n, 2.2e-17), (n * n, 1, -1.1e-17)])
write("asymmetric.mtx", [(i, j, -1.5) if (i, j) == (20401, 20601) else (i, j, v) for i, j, v in entries])
write("duplicate.mtx", entries + [entries[-1]])
write("zero-diagonal.mtx", [(i, j, 0.0) if i == j == 20000 else (i, j, v) for i, j, v in entries])
write("subnormal-diagonal.mtx", [(i, j, 3e-310) if i == j == 20000 else (i, j, v) for i, j, v in entries])
degree = {}
for i, j, v in entries:
    if i != j:
        degree[i] = degree.get(i, 0) + 1
write("singular.mtx", [(i, j, float(degree[i]) if i == j else v) for i, j, v in entries])
with open("bad-value.mtx", "w") as f:
    f.write(open("general.mtx").read().rsplit(" ", 1)[0] + " x\n")
PY
  printf 'problem:\n  type: matrix_market\n  matrix: general.mtx\n' > general.yaml
  "$amgsolve" general.yaml --report general-one.json --quiet || fail "general storage, one process"
  # The same matrix as a system of nodes of two rows (20,000 nodes: ten blocks of 2,048 over the ranks).
  "$amgsolve" general.yaml --set amg.block_size=2 --report general-system-one.json --quiet ||
    fail "general storage as a system, one process"
  # Three right-hand sides (load cases) in one file, solved with one setup.
  python3 -c "
import math
n = 40000
with open('loads.mtx', 'w') as f:
    f.write('%%%%MatrixMarket matrix array real general\n%d 3\n' % n)
    for c in range(3):
        f.writelines('%r\n' % math.sin(0.001 * (c + 1) * (i + 1)) for i in range(n))
"
  "$amgsolve" general.yaml --set problem.rhs=loads.mtx --set output.solution=loads-x-one.mtx \
    --report loads-one.json --quiet || fail "load cases, one process"
  sed '40005s/.*/nan/' loads.mtx > loads-nan.mtx  # column 2's third entry
  "$amgsolve" general.yaml --set problem.rhs=loads-nan.mtx --quiet >/dev/null 2>loads-nan-err.txt
  [ $? -eq 1 ] || fail "a load case of no value: not exit 1 on one process"
  sed "s/general.mtx/noisy.mtx/" general.yaml > noisy.yaml
  "$amgsolve" noisy.yaml --quiet >/dev/null || fail "round-off taken for an asymmetry, one process"
  for broken in "${broken_files[@]}"; do
    sed "s/general.mtx/$broken.mtx/" general.yaml > "$broken.yaml"
    "$amgsolve" "$broken.yaml" --quiet >/dev/null 2>"$broken-err.txt"
    status=$?
    [ "$status" -eq 1 ] || fail "$broken: exit $status on one process, expected 1"
    [ "$broken" != asymmetric ] || grep -q 'entries (20401, 20601) and (20601, 20401) differ' "$broken-err.txt" ||
      fail "asymmetric: the pair is not named: $(cat "$broken-err.txt")"
  done
  # The singular graph Laplacian as a system of nodes of two rows, whose nullspace (the constant: the sum of the
  # two components' unit vectors) the ranks find on their rows, with a right-hand side of +1 and -1 in turn
  # (in equilibrium).
  python3 -c "
n = 40000
with open('balanced.mtx', 'w') as f:
    f.write('%%%%MatrixMarket matrix array real general\n%d 1\n' % n)
    f.writelines('%d\n' % (1 - 2 * (i % 2)) for i in range(n))
"
  "$amgsolve" singular.yaml --set amg.block_size=2 --set problem.rhs=balanced.mtx --report singular-system-one.json \
    --quiet || fail "a singular system, one process"
  # The system's near-nullspace from a file, read on rank 0 and dealt out by rows: the rigid-body modes of its
  # 20,000 nodes on a 200 x 100 grid (problem.coordinates), and two vectors (problem.near_nullspace); and the
  # same error line as one process's for a node short and for a coordinate of no value on the last rows.
  python3 -c "
def write_points(name, nodes, last_y=None):
    ys = [0.5 * (i // 200) for i in range(nodes)]
    if last_y is not None:
        ys[-1] = last_y
    with open(name, 'w') as f:
        f.write('%%%%MatrixMarket matrix array real general\n%d 2\n' % nodes)
        f.writelines('%r\n' % float(i % 200) for i in range(nodes))
        f.writelines('%r\n' % y for y in ys)
write_points('points.mtx', 20000)
write_points('points-short.mtx', 19999)
write_points('points-nan.mtx', 20000, float('nan'))
with open('modes.mtx', 'w') as f:
    f.write('%%%%MatrixMarket matrix array real general\n%d 2\n' % 40000)
    f.writelines('%d\n' % (1 - i % 2) for i in range(40000))
    f.writelines('%r\n' % (i % 2 + 0.001 * (i // 2)) for i in range(40000))
"
  "$amgsolve" general.yaml --set problem.coordinates=points.mtx --report points-one.json --quiet ||
    fail "rigid-body modes of a coordinates file, one process"
  "$amgsolve" general.yaml --set amg.block_size=2 --set problem.near_nullspace=modes.mtx --report modes-one.json \
    --quiet || fail "a near-nullspace file, one process"
  for broken in points-short points-nan; do
    "$amgsolve" general.yaml --set problem.coordinates=$broken.mtx --quiet >/dev/null 2>"$broken-err.txt"
    [ $? -eq 1 ] || fail "$broken: not exit 1 on one process"
  done
else
  run "$ranks" "$amgsolve" general.yaml --report "$work/general-many.json" >"$work/general-out.txt" ||
    fail "general storage, $ranks ranks"
  # The file is read on rank 0 alone, which deals each rank its rows: the problem's line says so on ranks.
  if [ "$ranks" -gt 1 ]; then
    grep -q "read in .* s (on rank 0, each rank dealt its rows)" "$work/general-out.txt" ||
      fail "general storage, $ranks ranks: the read not said: $(head -3 "$work/general-out.txt")"
  else
    grep -q "read in [0-9.]* s$" "$work/general-out.txt" ||
      fail "general storage, 1 rank: the read not said: $(head -3 "$work/general-out.txt")"
  fi
  python3 - general-one.json "$work/general-many.json" <<'PY' || fail "general storage reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1)
PY
  run "$ranks" "$amgsolve" general.yaml --set amg.block_size=2 --report "$work/general-system-many.json" --quiet ||
    fail "general storage as a system, $ranks ranks"
  python3 - general-system-one.json "$work/general-system-many.json" <<'PY' || fail "the system's reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
assert one["setup"]["block_size"] == many["setup"]["block_size"] == 2
assert many["problem"]["assembled_by_rows"] == (many["ranks"] > 1), "rank 0 reads, every rank keeps its nodes"
PY
  run "$ranks" "$amgsolve" singular.yaml --set amg.block_size=2 --set problem.rhs=balanced.mtx \
    --report "$work/singular-system-many.json" --quiet || fail "a singular system, $ranks ranks"
  python3 - singular-system-one.json "$work/singular-system-many.json" <<'PY' || fail "the singular system's reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
assert one["setup"]["nullspace"] == many["setup"]["nullspace"] == "near_nullspace", one["setup"]["nullspace"]
PY
  run "$ranks" "$amgsolve" general.yaml --set problem.coordinates=points.mtx --report "$work/points-many.json" \
    --quiet || fail "rigid-body modes of a coordinates file, $ranks ranks"
  run "$ranks" "$amgsolve" general.yaml --set amg.block_size=2 --set problem.near_nullspace=modes.mtx \
    --report "$work/modes-many.json" --quiet || fail "a near-nullspace file, $ranks ranks"
  for name in points modes; do
    python3 - $name-one.json "$work/$name-many.json" <<'PY' || fail "$name: the reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert one["solve"]["history"] == many["solve"]["history"], "residual history"
table = lambda r: [(l["rows"], l["nnz"], l.get("aggregates")) for l in r["setup"]["levels"]]
assert table(one) == table(many), "hierarchy"
assert one["setup"]["block_size"] == many["setup"]["block_size"] == 2
PY
  done
  for broken in points-short points-nan; do
    run "$ranks" "$amgsolve" general.yaml --set problem.coordinates=$broken.mtx --quiet >/dev/null \
      2>"$work/$broken-err.txt"
    status=$?
    [ "$status" -eq 1 ] || fail "$broken: exit $status on $ranks ranks, expected 1"
    [ "$(grep '^amgsolve:' "$broken-err.txt")" = "$(grep '^amgsolve:' "$work/$broken-err.txt")" ] ||
      fail "$broken: '$(cat "$broken-err.txt")' on one process, '$(cat "$work/$broken-err.txt")' on $ranks"
  done
  run "$ranks" "$amgsolve" noisy.yaml --quiet >/dev/null || fail "round-off taken for an asymmetry, $ranks ranks"
  # Every load case's history and solution as on one process.
  run "$ranks" "$amgsolve" general.yaml --set problem.rhs=loads.mtx --set output.solution="$work/loads-x-many.mtx" \
    --report "$work/loads-many.json" --quiet || fail "load cases, $ranks ranks"
  cmp -s loads-x-one.mtx "$work/loads-x-many.mtx" || fail "the load cases' solutions differ"
  python3 - loads-one.json "$work/loads-many.json" <<'PY' || fail "the load cases' reports differ"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
assert [c["column"] for c in one["load_cases"]] == [1, 2, 3]
assert [c["history"] for c in one["load_cases"]] == [c["history"] for c in many["load_cases"]]
assert one["load_cases"][0]["history"] == many["solve"]["history"]
# Every column's solve in the per-rank figures (PCG sums at least twice an iteration), not the first's alone.
iterations = sum(c["iterations"] for c in many["load_cases"])
per_rank = many["solve"].get("per_rank", [])  # none on one rank
assert len(per_rank) == (many["ranks"] if many["ranks"] > 1 else 0)
assert all(r["reductions"] >= 2 * iterations for r in per_rank), (iterations, per_rank)
PY
  # Started from one process's solutions (problem.x0, read on rank 0 and sent to every rank): no iteration.
  run "$ranks" "$amgsolve" general.yaml --set problem.rhs=loads.mtx --set problem.x0=loads-x-one.mtx \
    --report "$work/loads-x0.json" --quiet || fail "load cases from their solutions, $ranks ranks"
  python3 -c "
import json, sys
assert [c['iterations'] for c in json.load(open(sys.argv[1]))['load_cases']] == [0, 0, 0]
" "$work/loads-x0.json" || fail "load cases from their solutions took iterations on $ranks ranks"
  run "$ranks" "$amgsolve" general.yaml --set problem.rhs=loads-nan.mtx --quiet >/dev/null 2>"$work/loads-nan-err.txt"
  status=$?
  [ "$status" -eq 1 ] || fail "a load case of no value: exit $status on $ranks ranks, expected 1"
  [ "$(grep -c '^amgsolve:' "$work/loads-nan-err.txt")" -eq 1 ] &&
    [ "$(grep '^amgsolve:' loads-nan-err.txt)" = "$(grep '^amgsolve:' "$work/loads-nan-err.txt")" ] ||
    fail "a load case of no value: '$(cat loads-nan-err.txt)' on one process, '$(cat "$work/loads-nan-err.txt")' on $ranks"
  for broken in "${broken_files[@]}"; do
    run "$ranks" "$amgsolve" "$broken.yaml" --quiet >/dev/null 2>"$work/$broken-err.txt"
    status=$?
    [ "$status" -eq 1 ] || fail "$broken: exit $status on $ranks ranks, expected 1"
    [ "$(grep -c '^amgsolve:' "$work/$broken-err.txt")" -eq 1 ] ||
      fail "$broken: not one amgsolve line: $(cat "$work/$broken-err.txt")"
    [ "$(grep '^amgsolve:' "$broken-err.txt")" = "$(grep '^amgsolve:' "$work/$broken-err.txt")" ] ||
      fail "$broken: '$(cat "$broken-err.txt")' on one process, '$(cat "$work/$broken-err.txt")' on $ranks"
  done
fi

check_error() {  # check_error WHAT EXPECTED-TEXT ARGS...: exit 1 and one amgsolve line naming it
  local what="$1" expected="$2"
  shift 2
  run "$ranks" "$amgsolve" "$@" >"$work/out.txt" 2>"$work/err.txt"
  local status=$?
  [ "$status" -eq 1 ] || fail "$what: exit $status, expected 1"
  [ "$(grep -c '^amgsolve:' "$work/err.txt")" -eq 1 ] || fail "$what: not one amgsolve line: $(cat "$work/err.txt")"
  grep -q "$expected" "$work/err.txt" || fail "$what: '$expected' not in: $(cat "$work/err.txt")"
}
if many; then
  check_error "missing config" "cannot read config file" "$work/missing.yaml"
  check_error "bad value" "solver.tolerance" "$config" --set solver.tolerance=abc
  vtk_output "$work/left.vti"
  check_error "unwritable report (checked on rank 0 only)" "report file" "$config" --report /proc/amgsolve.json \
    "${vtk_args[@]}"
  [ ! -e "$work/left.vti" ] || fail "an output was left behind"
  # backend: cuda runs the solve on each rank's GPU: without one, every rank's one error; and the setup,
  # on the ranks' cores, takes no GPU SpGEMM backend.
  if ! nvidia-smi -L >/dev/null 2>&1; then
    check_error "backend cuda without a GPU" "the cuda backend needs a GPU" "$config" --set backend=cuda
  fi
  check_error "a GPU SpGEMM backend for the ranks' setup" "cusparse" "$config" --set amg.spgemm=cusparse
  # An output that fails only when rank 0 writes it (/dev/full takes the open, not the data) ends every rank
  # with exit 1, each rank's status seen by a wrapper (mpirun told not to end the others at the first).
  "$mpirun" -np "$ranks" --oversubscribe --bind-to none --mca orte_abort_on_non_zero_status 0 \
    bash -c '"$0" "$@"; echo "rank exit $?" >&2' "$amgsolve" "$config" --quiet --report /dev/full \
    >/dev/null 2>"$work/err.txt"
  [ "$(grep -c '^rank exit 1$' "$work/err.txt")" -eq "$ranks" ] ||
    fail "a write that failed on rank 0: not every rank exited 1: $(cat "$work/err.txt")"
  grep -q "cannot write report file /dev/full" "$work/err.txt" || fail "a write that failed on rank 0: not said: $(cat "$work/err.txt")"
  # Ranks started with other settings (mpirun's colon form) would build other hierarchies and wait in other
  # collectives: refused before any work, not a hang.
  if [ "$ranks" -gt 1 ]; then
    "$mpirun" --oversubscribe --bind-to none -np 1 "$amgsolve" "$config" --quiet --report "" : \
      -np $((ranks - 1)) "$amgsolve" "$config" --quiet --report "" --set amg.smoother.degree=3 \
      >"$work/out.txt" 2>"$work/err.txt"
    status=$?
    [ "$status" -eq 1 ] || fail "ranks with other settings: exit $status, expected 1"
    grep -q "the ranks were started with different settings" "$work/err.txt" ||
      fail "ranks with other settings: not said: $(cat "$work/err.txt")"
    # The ranks of a node check their memory together (MPI_Comm_split_type: here every rank is on this node),
    # not each its share against the node's free memory alone, which all of them would pass.
    check_error "a problem beyond the node's memory" "for the $ranks ranks on this node together" \
      "$source/configs/poisson.yaml" --set "problem.size=[1200,1200,1200]"
    # A rank's own environment: a thread count that only some ranks cannot use is every rank's one error
    # (those ranks refused it before the others' first collective, which then waited for ever).
    timeout 120 "$mpirun" --oversubscribe --bind-to none -np 1 "$amgsolve" "$config" --quiet --report "" : \
      -np $((ranks - 1)) -x OMP_NUM_THREADS=abc "$amgsolve" "$config" --quiet --report "" \
      >"$work/out.txt" 2>"$work/err.txt"
    status=$?
    [ "$status" -eq 1 ] || fail "a thread count only some ranks refuse: exit $status, expected 1"
    [ "$(grep -c '^amgsolve:' "$work/err.txt")" -eq 1 ] && grep -q "rank 1: OMP_NUM_THREADS='abc'" "$work/err.txt" ||
      fail "a thread count only some ranks refuse: not said once: $(cat "$work/err.txt")"
    # An error only some ranks meet in the middle of the computation (here split3d's layer count, read from
    # each rank's environment in the setup's first product): those ranks name themselves and end every rank
    # (the others waited for ever in the product's collectives).
    timeout 120 "$mpirun" --oversubscribe --bind-to none -np 1 "$amgsolve" "$config" --quiet --report "" \
      --set amg.spgemm=split3d : -np $((ranks - 1)) -x AMGSOLVE_SPLIT3D_LAYERS=abc "$amgsolve" "$config" --quiet \
      --report "" --set amg.spgemm=split3d >"$work/out.txt" 2>"$work/err.txt"
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "an error on some ranks in the setup: exit $status"
    grep -q "^amgsolve: error on rank [1-9][0-9]*: AMGSOLVE_SPLIT3D_LAYERS='abc'" "$work/err.txt" ||
      fail "an error on some ranks in the setup: not said: $(cat "$work/err.txt")"
  fi
fi
exit $failed

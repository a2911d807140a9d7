#!/usr/bin/env bash
# spgemm-bench on a product too large for the memory (ctest label `cli`; not run by scripts/sanitize, whose
# sanitizers cannot start under an address-space limit): the square of an arrow matrix (a dense first row and
# column, 60,000 entries) is dense, 4.8 GB, under a 3 GB limit. The failure is said in the table, the run goes
# on and ends with exit 1 naming it (it ended at once with a bare std::bad_alloc, the CSV lost).
#   spgemm_bench_memory.sh SPGEMM_BENCH WORK_DIR
set -uo pipefail
bench="$1" work="$2"
mkdir -p "$work" && cd "$work" || exit 1
awk 'BEGIN { n = 20000; print "%%MatrixMarket matrix coordinate real general"; print n, n, 3 * n - 2
             for (i = 1; i <= n; i++) print i, i, 4
             for (i = 2; i <= n; i++) { print 1, i, 1; print i, 1, 1 } }' > arrow.mtx
awk 'BEGIN { n = 50; print "%%MatrixMarket matrix coordinate real general"; print n, n, n
             for (i = 1; i <= n; i++) print i, i, 2 }' > small.mtx
rm -f bench.csv
prlimit --as=3000000000 "$bench" --matrix small.mtx arrow.mtx --runs 1 --warmup 0 --csv bench.csv >out.txt 2>err.txt
status=$?
failed=0
[ "$status" -eq 1 ] || { echo "FAIL: exit $status, expected 1"; failed=1; }
grep -q "arrow.mtx .* failed: out of memory" out.txt || { echo "FAIL: the table does not say it"; failed=1; }
grep -q "spgemm-bench: error: 1 product(s) ran out of memory" err.txt || { echo "FAIL: not named at the end"; failed=1; }
grep -q "small.mtx" bench.csv 2>/dev/null || { echo "FAIL: the CSV lost the products measured"; failed=1; }
[ "$failed" = 0 ] || { cat out.txt err.txt; exit 1; }
echo "ok"

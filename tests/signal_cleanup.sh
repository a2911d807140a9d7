#!/usr/bin/env bash
# A run ended by SIGTERM (what mpirun sends its ranks on Ctrl-C), SIGHUP or SIGKILL while writing its outputs
# leaves no temporary file behind its regular outputs; nor does one whose reader goes away (SIGPIPE: `... |
# head`) or that writes past ulimit -f (SIGXFSZ is ignored, so the write fails with one error line and exit
# 1). Deterministic: the report goes to a FIFO nobody reads, so the run waits in its last step, its finished
# report in a temporary file of $TMPDIR and its solution staged for its target (renamed only after the FIFO
# is written), until the signal comes. The solution is staged without a name (O_TMPFILE) where the file
# system has such files, so that even SIGKILL, which no handler sees, leaves nothing beside it (the report's
# copy for the FIFO is a named file of $TMPDIR: SIGKILL leaves that one); elsewhere as x.mtx.tmp-PID.
#   signal_cleanup.sh AMGSOLVE CONFIG
set -u
amgsolve=$(realpath "$1") config=$(realpath "$2")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
unnamed=$(python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600))' "$scratch" \
  2>/dev/null && echo yes || echo no)
signals="TERM HUP"
[ "$unnamed" = no ] || signals="$signals KILL"
for signal in $signals; do
  mkfifo "$scratch/report.fifo"
  mkdir "$scratch/tmp"
  TMPDIR="$scratch/tmp" timeout 120 "$amgsolve" "$config" --quiet --vtk '' --report "$scratch/report.fifo" \
    --set output.solution="$scratch/x.mtx" &
  pid=$!
  for _ in $(seq 1 1200); do  # the temporary report appears once the solve is done
    [ -n "$(ls "$scratch/tmp")" ] && break
    sleep 0.1
  done
  [ -n "$(ls "$scratch/tmp")" ] || { echo "FAIL ($signal): no temporary report appeared"; kill "$pid"; exit 1; }
  sleep 0.2
  staged="$(cd "$scratch" && ls -d x.mtx* 2>/dev/null)"
  if [ "$unnamed" = yes ]; then
    [ -z "$staged" ] || { echo "FAIL ($signal): the solution was staged by a name: $staged"; kill "$pid"; exit 1; }
  else
    [ -n "$staged" ] || { echo "FAIL ($signal): the solution was not staged"; kill "$pid"; exit 1; }
  fi
  target=$pid
  if [ "$signal" = KILL ]; then  # timeout cannot pass SIGKILL on: it goes to amgsolve itself
    target=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
    [ -n "$target" ] || { echo "FAIL (KILL): amgsolve's process not found under timeout's"; kill "$pid"; exit 1; }
  fi
  kill -s "$signal" $target
  wait "$pid"
  status=$?
  [ "$signal" != KILL ] || rm -rf "$scratch/tmp"/*  # the FIFO's staged report: named, and SIGKILL is not seen
  left="$(ls "$scratch/tmp") $(cd "$scratch" && ls -d x.mtx* 2>/dev/null)"
  left="${left// /}"
  if [ -n "$left" ]; then echo "FAIL ($signal): left behind: $left"; exit 1; fi
  if [ "$status" -lt 128 ]; then echo "FAIL ($signal): the run ended with $status, not by the signal"; exit 1; fi
  echo "ok ($signal): exit $status, nothing left behind"
  rm -rf "$scratch/report.fifo" "$scratch/tmp"
done

mkdir "$scratch/tmp"
TMPDIR="$scratch/tmp" "$amgsolve" "$config" --quiet --vtk '' --report '' --set output.solution=/dev/stdout \
  2>"$scratch/err.txt" | head -c 50 >/dev/null
status=${PIPESTATUS[0]}
# Ended by SIGPIPE (141), or, where the test runs with SIGPIPE ignored (a service manager's default), the write
# fails with EPIPE: one error line and exit 1.
if ! { [ "$status" -eq 141 ] || { [ "$status" -eq 1 ] && grep -q "Broken pipe" "$scratch/err.txt"; }; }; then
  echo "FAIL (PIPE): exit $status, expected 141 (SIGPIPE) or 1 (Broken pipe): $(cat "$scratch/err.txt")"; exit 1
fi
[ -z "$(ls "$scratch/tmp")" ] || { echo "FAIL (PIPE): left behind: $(ls "$scratch/tmp")"; exit 1; }
echo "ok (PIPE): exit $status, nothing left behind"

(cd "$scratch" && ulimit -f 20 && "$amgsolve" "$config" --quiet --vtk '' --report r.json --set output.solution=x.mtx \
  >/dev/null 2>err.txt)
status=$?
[ "$status" -eq 1 ] || { echo "FAIL (XFSZ): exit $status, expected 1"; exit 1; }
grep -q "File too large" "$scratch/err.txt" || { echo "FAIL (XFSZ): $(cat "$scratch/err.txt")"; exit 1; }
left="$(cd "$scratch" && ls -d r.json* x.mtx* 2>/dev/null)"
[ -z "$left" ] || { echo "FAIL (XFSZ): left behind: $left"; exit 1; }
echo "ok (XFSZ): exit 1, $(cat "$scratch/err.txt")"

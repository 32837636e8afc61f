#!/usr/bin/env bash
# Prints the `iolatency` spec that gives a scenario's readers the same
# objective `steer` is given, so that the policy comparisons are fair to it:
# io.latency target = the objective's bound in absolute terms (2x the
# before-fill read p99 under fifo, the lowest of the seeds asked for), on
# the readers' tenants only (the fill gets no target, so it is the peer
# whose depth is squeezed). Tenants are the scenario's jobs in order.
#
#   scripts/readers-iolatency.sh BINARY SCENARIO DEVICE [extra sweep flags, e.g. --seed 1..5]
#
# The objective is judged on p99, while iolatency's rule on flash is that
# at most 10% of a window's I/Os miss the target (a p90): given the same
# bound, iolatency is asked for less than steer, not more.
set -euo pipefail
bin="$1" scenario="$2" device="$3"
shift 3
case "$scenario" in
  fill-while-serving|quick|fill-listening|quick-listening) readers="0" ;;
  long-fill) readers="0 1" ;; # readers.1, readers.2 (then fill.1, fill.2)
  *) echo "readers-iolatency.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
err=$(mktemp)
trap 'rm -f "$err"' EXIT
json=$("$bin" sweep "$scenario" --device "$device" --objective 'p99<=2x' \
  --sched fifo --chart - --json "$@" 2>"$err") || { cat "$err" >&2; exit 1; }
bound_us=$(echo "$json" | python3 -c '
import json, sys
report = json.load(sys.stdin)
points = [p for seed in report.get("per_seed") or [report["points"]] for p in seed]
print(round(min(p["bound_ms"] for p in points) * 1000))')
spec="iolatency:"
for tenant in $readers; do spec="${spec}target.$tenant=${bound_us}us,"; done
echo "${spec%,}"

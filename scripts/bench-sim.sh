#!/usr/bin/env bash
# The simulator's speed end to end (`iosteer bench sim`) with instruction
# counts, which wall time on a shared machine cannot give:
#
#   scripts/bench-sim.sh [REPEAT] [BINARY]      (default: 5, the release build)
#
# 1. `iosteer bench sim --repeat REPEAT --json`: requests and NAND page
#    operations per second of wall and CPU time (medians), peak RSS.
# 2. Instructions per request of each case's run (aging excluded):
#    `perf stat -e instructions:u` around a run of one case when the CPU's
#    counters can be read (installing linux-perf first when perf is missing
#    and we are root), the difference between a 3-run and a 1-run process
#    over two runs' requests (aging and start-up cancel out); else
#    valgrind's callgrind, counting only inside
#    iosteer_sim::run::Simulation::run_with_stats (much slower).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-5}
bin=${2:-}
if [[ -z $bin ]]; then
    cargo build --release -q -p iosteer
    bin="${CARGO_TARGET_DIR:-target}/release/iosteer"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$bin" bench sim --repeat "$repeat" --json >"$out/bench.json"
python3 - "$out/bench.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print(f"{'case':<12} {'requests':>9} {'NAND ops':>10} {'req/s':>10} {'req/cpu-s':>10} {'NAND/s':>11} {'NAND/cpu-s':>11} {'aging s':>8}")
for c in b["cases"]:
    print(f"{c['name']:<12} {c['requests']:>9} {c['nand_page_ops']:>10} {c['requests_per_s']:>10.0f} "
          f"{c['requests_per_cpu_s']:>10.0f} {c['nand_page_ops_per_s']:>11.0f} {c['nand_page_ops_per_cpu_s']:>11.0f} {c['aging_s']:>8.2f}")
print(f"peak RSS {b['peak_rss_mib']} MiB; medians of {len(b['cases'][0]['wall_s'])} runs")
PY

if ! command -v perf >/dev/null && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y -q linux-perf >/dev/null 2>&1 || true
fi
counters=false
if command -v perf >/dev/null && perf stat -x, -e instructions:u true 2>&1 | grep -q '^[0-9]'; then
    counters=true
fi

requests_of() { # requests_of CASE
    python3 -c "import json,sys; print([c['requests'] for c in json.load(open('$out/bench.json'))['cases'] if c['name']=='$1'][0])"
}
for case in 4k-mix fill-128k large-trace; do
    requests=$(requests_of "$case")
    if $counters; then
        count() {
            perf stat -x, -e instructions:u "$bin" bench sim --case "$case" --repeat "$1" 2>&1 >/dev/null |
                awk -F, '/instructions/ {print $1}'
        }
        one=$(count 1)
        three=$(count 3)
        how="perf stat"
    elif command -v valgrind >/dev/null; then
        count() {
            valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
                --toggle-collect='iosteer_sim::run::Simulation::run_with_stats*' \
                "$bin" bench sim --case "$case" --repeat "$1" 2>&1 >/dev/null |
                sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
        }
        one=$(count 1)
        three=0
        how="callgrind"
    else
        echo "instructions: neither readable CPU counters (perf) nor valgrind" >&2
        exit 0
    fi
    if [[ $how == callgrind ]]; then
        per=$(( one / requests ))
    else
        per=$(( (three - one) / (2 * requests) ))
    fi
    echo "$case: $per instructions per request ($how, $requests requests a run)"
done

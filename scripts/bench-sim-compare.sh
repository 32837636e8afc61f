#!/usr/bin/env bash
# Two builds of iosteer, A/B, on `iosteer bench sim`: the runs alternate
# (old, new, old, new, ...) so both see the same load on a shared machine,
# and the medians over the rounds are compared as new/old ratios.
#
#   scripts/bench-sim-compare.sh OLD_BINARY NEW_BINARY [ROUNDS] [CASE...]
#                                (default: 2 rounds of --repeat 3, every case)
#
# Per case: requests per CPU second, NAND page operations per CPU second,
# requests per wall second, and the wall seconds of aging; and the peak RSS
# of each process. Keep the old binary (cp target/release/iosteer
# /somewhere/iosteer-old) before building the new one.
set -euo pipefail
old=${1:?usage: scripts/bench-sim-compare.sh OLD NEW [ROUNDS] [CASE...]}
new=${2:?usage: scripts/bench-sim-compare.sh OLD NEW [ROUNDS] [CASE...]}
rounds=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
cases=()
for c in "$@"; do cases+=(--case "$c"); done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
for r in $(seq "$rounds"); do
    "$old" bench sim --repeat 3 "${cases[@]}" --json >"$d/old$r.json"
    "$new" bench sim --repeat 3 "${cases[@]}" --json >"$d/new$r.json"
done
python3 - $d $rounds <<'PY'
import json, sys, statistics as st
d, n = sys.argv[1], int(sys.argv[2])
def load(w): return [json.load(open(f"{d}/{w}{r}.json")) for r in range(1, n+1)]
old, new = load("old"), load("new")
for i, c in enumerate(old[0]["cases"]):
    for k in ("requests_per_cpu_s", "nand_page_ops_per_cpu_s", "requests_per_s"):
        o = st.median(x["cases"][i][k] for x in old); nn = st.median(x["cases"][i][k] for x in new)
        print(f"{c['name']:<12} {k:<24} old {o:>12.0f} new {nn:>12.0f} ratio {nn/o:.3f}")
    print(f"{c['name']:<12} aging_s old {st.median(x['cases'][i]['aging_s'] for x in old)} new {st.median(x['cases'][i]['aging_s'] for x in new)}")
print("peak MiB old", [x["peak_rss_mib"] for x in old], "new", [x["peak_rss_mib"] for x in new])
PY

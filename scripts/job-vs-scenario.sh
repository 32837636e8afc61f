#!/usr/bin/env bash
# Does examples/fill-while-serving.fio, the built-in scenario written as a
# fio job file, give the scenario's verdicts? Sweeps both on the same grid
# and seeds (consumer-sata, p99 <= 2x the serve-only phase's) and prints
# one row per setting: the write rate and verdict of each, and whether they
# agree.
#
#   scripts/job-vs-scenario.sh            (IOSTEER=path/to/iosteer, default
#                                          target/release/iosteer; GRID, SEEDS)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${IOSTEER:-target/release/iosteer}
grid=${GRID:-netflix:write.limiter=bandwidth,write.current=5000..40000/5000}
seeds=${SEEDS:-1..3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" sweep fill-while-serving --vary "$grid" --seed "$seeds" \
    --objective 'p99<=2x' --chart - --json >"$tmp/scenario.json"
"$bin" sweep --job examples/fill-while-serving.fio --vary "$grid" --seed "$seeds" \
    --phase readers+fill --baseline readers \
    --objective 'p99<=2x' --chart - --json >"$tmp/job.json"
python3 - "$tmp/scenario.json" "$tmp/job.json" <<'PY'
import json, sys
scenario, job = (json.load(open(f)) for f in sys.argv[1:3])
verdict = lambda p: f"{'meets' if p['meets'] else 'fails'} ({p['seeds_met']}/{p['seeds']})"
print(f"| setting | scenario MB/s | scenario p99 ms (bound) | scenario | job file MB/s | job file p99 ms (bound) | job file | same |")
print("|---|---|---|---|---|---|---|---|")
agree = 0
for s, j in zip(scenario["points"], job["points"]):
    assert s["spec"] == j["spec"], (s["spec"], j["spec"])
    same = s["meets"] == j["meets"]
    agree += same
    print(f"| `{s['spec']}` | {s['write_mbps']:.1f} | {s['value_ms']:.1f} ({s['bound_ms']:.1f}) | {verdict(s)} "
          f"| {j['write_mbps']:.1f} | {j['value_ms']:.1f} ({j['bound_ms']:.1f}) | {verdict(j)} | {'yes' if same else 'NO'} |")
best = lambda r: r.get("best") or "none"
print(f"\nverdicts agree on {agree} of {len(scenario['points'])} settings; best: scenario {best(scenario)}, job file {best(job)}")
PY

#!/usr/bin/env bash
# Checks `--precondition aged-fast` (one die aged, copied onto every die)
# against simulated aging (`aged`, every overwrite simulated) on the presets:
#   (a) write amplification of the next 10 GiB of uniform random overwrites,
#   (b) free-block pool after aging,
#   (c) the default scenario's fill-phase read p99 and write amplification,
# and times both on a 1 TiB enterprise-nvme (blocks_per_plane = 5688).
# Prints a table per check and `agree`/`DIFFER` at 5 %.
# Usage: [SEEDS="1 2 3"] (default 1-20) scripts/fast-aging-check.sh [N]
#   (N capacities of overwrites, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-2}"
# The default scenario is run with each seed (aging, arrivals and offsets all
# follow it): the spread across seeds is the yardstick for a difference. The
# fill p99 on consumer-sata spreads by 50-100 ms from seed to seed (a
# standard error of 4-7 % on a 30-seed mean), so three seeds cannot tell a
# 5 % difference from none; twenty take about 20 minutes on two cores.
seeds="${SEEDS:-$(seq -s ' ' 1 20)}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p iosteer-device --example aging_check
cargo build --release -q -p iosteer
check="$target/release/examples/aging_check"
iosteer="$target/release/iosteer"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for preset in consumer-sata enterprise-nvme; do
  for state in "aged=$n" "aged-fast=$n"; do
    "$check" "$preset" "$state" - 10 >>"$out/state.jsonl"
    for seed in $seeds; do
      "$iosteer" sim --device "$preset" --precondition "$state" --seed "$seed" --json \
        >"$out/sim-$preset-${state%%=*}-$seed.json"
    done
  done
done
# 1 TiB of NAND: time only (the next-writes check of a drive this size would
# itself take minutes).
for state in "aged=$n" "aged-fast=$n"; do
  "$check" enterprise-nvme "$state" 5688 0 >>"$out/big.jsonl"
done

python3 - "$out" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
def close(a, b, tol=0.05):
    return "agree" if abs(a - b) <= tol * abs(a) else "DIFFER"
rows = [json.loads(l) for l in open(f"{out}/state.jsonl")]
print("(a, b) state after aging, and the next 10 GiB of random overwrites")
print(f"{'drive':16} {'state':14} {'aging s':>8} {'free blocks':>11} {'next WA':>8}")
for r in rows:
    print(f"{r['device']:16} {r['state']:14} {r['aging_s']:8.3f} {r['free_blocks']:11d} {r['next_waf']:8.4f}")
for preset in ("consumer-sata", "enterprise-nvme"):
    slow, fast = [r for r in rows if r["device"] == preset]
    print(f"  {preset}: next WA {close(slow['next_waf'], fast['next_waf'])} "
          f"({(fast['next_waf'] / slow['next_waf'] - 1) * 100:+.2f} %), free pool "
          f"{'equal' if slow['free_blocks'] == fast['free_blocks'] else 'DIFFER'}")
print()
print("(c) default scenario, fill phase: read p99 ms and write amplification per seed;")
print("    `agree` when the seed-averaged figures are within 5 %; the difference is")
print("    given with one standard error of it (from the two seed spreads)")
seeds = sorted({int(os.path.basename(f).rsplit("-", 1)[1][:-5]) for f in glob.glob(f"{out}/sim-*.json")})
def fill(preset, state, seed):
    runs = json.load(open(f"{out}/sim-{preset}-{state}-{seed}.json"))["runs"]
    return [(r["scheduler"], next(p for p in r["phases"] if p["name"] == "fill")) for r in runs]
for preset in ("consumer-sata", "enterprise-nvme"):
    for i, (sched, _) in enumerate(fill(preset, "aged", seeds[0])):
        line = {}
        for state in ("aged", "aged-fast"):
            phases = [fill(preset, state, seed)[i][1] for seed in seeds]
            line[state] = ([p["read"]["lat_us"]["p99"] / 1e3 for p in phases], [p["waf"] for p in phases])
        (ps, ws), (pf, wf) = line["aged"], line["aged-fast"]
        mean = lambda xs: sum(xs) / len(xs)
        var = lambda xs: sum((x - mean(xs)) ** 2 for x in xs) / max(len(xs) - 1, 1)
        diff = (mean(pf) / mean(ps) - 1) * 100
        se = (var(ps) / len(ps) + var(pf) / len(pf)) ** 0.5 / mean(ps) * 100
        print(f"{preset} {sched}")
        print(f"    read p99 aged {' '.join(f'{x:.2f}' for x in ps)} | aged-fast {' '.join(f'{x:.2f}' for x in pf)}"
              f" | means {mean(ps):.2f} {mean(pf):.2f} ({diff:+.1f} % +- {se:.1f} %) {close(mean(ps), mean(pf))}")
        print(f"    WA       aged {' '.join(f'{x:.3f}' for x in ws)} | aged-fast {' '.join(f'{x:.3f}' for x in wf)}"
              f" | means {mean(ws):.3f} {mean(wf):.3f} {close(mean(ws), mean(wf))}")
print()
print("1 TiB enterprise-nvme (blocks_per_plane = 5688): aging wall time")
for l in open(f"{out}/big.jsonl"):
    r = json.loads(l)
    print(f"  {r['state']:14} {r['nand_gib']:8.1f} GiB of NAND  {r['aging_s']:7.2f} s")
PY

#!/usr/bin/env bash
# Issue 25's measurement: does `steer` keep its promise on drives it was not
# developed on? Every drive of the family (`iosteer device random --seed N`)
# runs the default scenario on every seed with `steer` stating p99<=2x and
# p99<=1.5x, beside a static write-limit grid chosen per drive (halvings
# down from the fill's offered rate, refined by quarter-doublings above the
# best), and each is judged by its objective: the share of (drive, seed)
# pairs meeting it, and the write rate over the best static limit meeting it
# on that drive. Writes the table, the per-drive progress and the chart of
# the ratio per drive into OUT.
#
#   [DRIVES=family:1..50] [SEEDS=1..3] [STATIC_POINTS=7] [OUT=target/family] \
#     scripts/family.sh [extra iosteer sweep flags...]
#
# One run of the default scenario takes 2 to 25 s of one core (the host
# link sets the read rate, so the request count: 0.2 M requests on a
# 300 MB/s SATA drive, 1.5 M at 4 GB/s), and each (drive, seed) pair costs
# 2 steer runs, STATIC_POINTS static ones, up to 6 refinements and, where
# no limit of the grid meets an objective, the lowest halving below it
# (10 kB/s or just above) and, if that meets, a bisection of the halvings
# between (at most 4 more on a 7 GB/s drive, whose runs are the longest):
# the default 50 x 3 is about 2,000 runs; DRIVES and SEEDS size it to the
# time at hand.
#
# STEER_ONLY=1 runs steer alone, without the static grid (minutes, not
# hours): the share of pairs meeting each objective, nothing else.
#
# CASES=1 runs instead the family drives where steer failed (issue 25; the
# reasons are in docs/RESULTS.md), each with the objective it missed, steer
# and the static limit that met it: a fixed steer meets it on each. Steer
# runs with `deadline=hold` (the deadline sends a write whatever the
# objective) and as it stands (`deadline=yield`, the default since
# 2026-11-24: the deadline yields to an owed objective, keeping the
# reserve): the last three then meet; family:6 meets since its debt is
# paid back, not forgiven (21cd752); the cliffs (family:1, 7) still miss
# (docs/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p iosteer
bin=target/release/iosteer
if [ -n "${CARGO_TARGET_DIR:-}" ]; then bin="$CARGO_TARGET_DIR/release/iosteer"; fi
if [ -n "${CASES:-}" ]; then
  # drive, objective missed, a static limit (kB/s) that met it or "-" (none
  # down to 6%/128 of the link did), why
  while read -r drive objective limit why; do
    echo "== $drive $objective: $why"
    statics=()
    if [ "$limit" != - ]; then
      statics=(--sched "netflix:write.limiter=bandwidth,write.current=$limit")
    fi
    "$bin" sweep fill-while-serving --device "$drive" --seed 1 --objective "$objective" \
      --chart - --sched "steer:objective=$objective,deadline=hold" \
      --sched "steer:objective=$objective" "${statics[@]}"
  done <<'LIST'
family:1 p99<=2x 7584 write cliff onto blocking GC
family:7 p99<=2x 1125 write cliff onto blocking GC
family:6 p99<=2x 10227 ramps into GC bursts after quiet spells
family:5 p99<=1.5x 516 was below the write deadline's floor (0.84 MB/s)
family:2 p99<=1.5x - was below the write deadline's floor
family:11 p99<=2x - was below the write deadline's floor
LIST
  exit 0
fi
if [ -n "${STEER_ONLY:-}" ]; then
  # steer alone, no static grid: each (drive, seed, objective) as a one-drive
  # sweep, two at a time; prints "drive seed objective write_MB/s value
  # bound met" per run and the pairs met per objective. STEER_ONLY may carry
  # tunables to add (STEER_ONLY=,min_rate=10; "1" for none). Drives are
  # family numbers (FIRST..LAST of DRIVES=family:FIRST..LAST), seeds 1..3.
  extra=${STEER_ONLY#1}
  range=${DRIVES:-family:1..50}; range=${range#family:}
  for d in $(seq "${range%..*}" "${range#*..}"); do for s in 1 2 3; do for o in 2x 1.5x; do
    echo "$d $s $o"
  done; done; done | xargs -P 2 -n 3 sh -c '
    # The JSON, not the table: its columns moved once and every run read as missed.
    figures=$('"$bin"' sweep fill-while-serving --device "family:$0" --seed "$1" \
      --objective "p99<=$2" --chart - --sched "steer:objective=p99<=$2'"$extra"'" --json \
      2>/dev/null | python3 -c "import json, sys
p = json.load(sys.stdin)[\"points\"][0]
print(p[\"write_mbps\"], p[\"value_ms\"], round(p[\"bound_ms\"], 3), \"yes\" if p[\"meets\"] else \"no\")")
    echo "$0 $1 $2 $figures"' | sort -n -k1 -k2 | tee /dev/stderr |
    awk '{n[$3]++; if ($7 == "yes") m[$3]++} END {for (o in n) print "p99<=" o ": met on " m[o]+0 " of " n[o] " (drive, seed) pairs"}'
  exit 0
fi
out=${OUT:-target/family}
mkdir -p "$out"
touch "$out/family.txt" "$out/progress.log"
echo "iosteer sweep over ${DRIVES:-family:1..50}, seeds ${SEEDS:-1..3}; $(date -u +%FT%TZ)" >&2
"$bin" sweep fill-while-serving --device "${DRIVES:-family:1..50}" --seed "${SEEDS:-1..3}" \
  --objective 'p99<=2x' --objective 'p99<=1.5x' \
  --sched 'steer:objective=p99<=2x' --sched 'steer:objective=p99<=1.5x' \
  --static-points "${STATIC_POINTS:-7}" --chart "$out/family.svg" "$@" \
  > "$out/family.txt" 2> >(tee "$out/progress.log" >&2)
cat "$out/family.txt"
echo "wrote $out/family.txt, $out/progress.log, $out/family.svg" >&2

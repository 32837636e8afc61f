#!/usr/bin/env bash
# Issue 25, item 3: the oracle of the headline scenario. On each preset and
# objective, the best write schedule with hindsight (piecewise-constant
# write limits over the fill, searched by coordinate ascent from the best
# constant limit, and steer's own per-second writes replayed and scaled; see
# crates/study/src/oracle.rs), the best constant limit of the same search,
# and `steer` stating the same objective, all on one seed; each setting's
# fill-phase write MB/s is given as a share of the oracle's. Writes one table
# per (preset, objective) into OUT, each run's figures into a .log beside
# it, and prints the tables.
#
#   [DEVICES="consumer-sata enterprise-nvme"] [OBJECTIVES="p99<=2x p99<=1.5x"]
#   [SEED=1] [SEGMENTS=6] [PASSES=2] [TOLERANCE=0.05] [NETFLIX=read_bias=100]
#   [OUT=target/oracle] scripts/oracle.sh
#
# NETFLIX: netflix settings the schedules run with besides their limit
# (default none: netflix's defaults, as the sweep's static limits; with
# read_bias=100 reads go before writes, as steer sends them); the files'
# names then end in those settings.
#
# Cost: about 50 to 90 runs of the scenario per (preset, objective), one
# after the other (each run depends on the last): 1.5 to 2 s each on
# consumer-sata and 3.5 to 4 s on enterprise-nvme on one free core, so a
# few minutes per pair (three to five times that on a loaded machine). The
# two presets can run at once: DEVICES=consumer-sata and
# DEVICES=enterprise-nvme.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p iosteer-study --example oracle
bin=target/release/examples/oracle
if [ -n "${CARGO_TARGET_DIR:-}" ]; then bin="$CARGO_TARGET_DIR/release/examples/oracle"; fi
out=${OUT:-target/oracle}
netflix=${NETFLIX:-}
suffix=${netflix:+-${netflix//[=,]/}}
mkdir -p "$out"
echo "oracle, seed ${SEED:-1}, ${SEGMENTS:-6} segments, ${PASSES:-2} passes, tolerance ${TOLERANCE:-0.05}, netflix settings '${netflix}'; $(date -u +%FT%TZ)" >&2
for device in ${DEVICES:-consumer-sata enterprise-nvme}; do
  for objective in ${OBJECTIVES:-p99<=2x p99<=1.5x}; do
    name="$out/$device-${objective//[<=]/}$suffix"
    touch "$name.txt" "$name.log"
    "$bin" --device "$device" --objective "$objective" --seed "${SEED:-1}" \
      --segments "${SEGMENTS:-6}" --passes "${PASSES:-2}" --tolerance "${TOLERANCE:-0.05}" \
      --netflix "$netflix" > "$name.txt" 2> "$name.log"
    cat "$name.txt"
  done
done

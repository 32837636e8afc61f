#!/usr/bin/env bash
# Behaviour unchanged? Runs a fixed set of deterministic commands with the
# iosteer of a base revision and with the working tree, and compares their
# outputs byte for byte. Kept for refactors: a change that should not move a
# figure runs this before it is committed.
#
#   scripts/same-output.sh [BASE_REV]     (default: HEAD)
#
# The commands: the default `iosteer sim`, `iosteer sim quick --json`, one
# trace replay (JSON), one `sweep` on fixed seeds (JSON) and one `probe
# --emulate` on a small drive (JSON). (The trace replay's rates differ from
# bases before 97a3a8f, where its phase counted the drain time.) Wall-clock figures are masked before the comparison: the speed
# lines of `sim`; and of the probe only its plan is compared (steps, rates,
# specs, report keys), because the emulated drive runs in real time and what
# it measures moves from run to run.
# The base revision is built in a temporary git worktree with a target
# directory of its own under target/same-output/, kept between runs so a
# second check against the same base does not rebuild it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base=$(git rev-parse "${1:-HEAD}")
work="$root/target/same-output"
mkdir -p "$work"

build() { # build DIR TARGET_DIR
    (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --release -q -p iosteer)
}

# The speed line of `sim` and its JSON twins are wall time, not results.
mask_wall() {
    sed -E -e 's/simulated in [0-9.]+ s of wall time \([0-9]+ requests\/s\)/simulated in <wall>/' \
        -e 's/"(wall_s|requests_per_s)": [0-9.e+-]+/"\1": <wall>/'
}
# The probe's plan: what it asked of each step and the words around it; what
# the emulated drive measured in real time (counts, floats, verdicts that
# hinge on them, the notes on late wake-ups) is dropped.
probe_plan() {
    python3 -c '
import json, sys
r = json.load(sys.stdin)
steps = [{k: s[k] for k in ("rate_bytes_per_s", "spec")} for s in [r["baseline"]] + r["steps"]]
keep = {k: r[k] for k in ("target", "throttle", "objective", "step_s", "settle_s")}
json.dump({"plan": keep, "steps": steps, "keys": sorted(r)}, sys.stdout, indent=1)
'
}

outputs() { # outputs BIN DIR
    local bin=$1 out=$2
    mkdir -p "$out"
    "$bin" sim 2>/dev/null | mask_wall >"$out/sim.txt"
    "$bin" sim quick --json 2>/dev/null | mask_wall >"$out/sim-quick.json"
    "$bin" sim --trace traces/financial1-excerpt.ascii --sched fifo --sched steer --json \
        2>/dev/null | mask_wall >"$out/trace.json"
    "$bin" sweep quick --seed 1..2 --objective 'p99<=2x' --json --chart - \
        --vary 'netflix:write.limiter=bandwidth,write.current=10000..20000/10000' \
        --sched steer 2>/dev/null | mask_wall >"$out/sweep.json"
    "$bin" device show consumer-sata |
        sed -e 's/blocks_per_plane = 544/blocks_per_plane = 128/' \
            -e 's/high_watermark = 48/high_watermark = 8/' >"$out/small-sata.toml"
    "$bin" probe --emulate "$out/small-sata.toml" --rates 5m,10m --step-time 1s \
        --settle 500ms --objective 'p99<=4x' --out "$out/probe" >/dev/null 2>&1
    probe_plan <"$out/probe/probe.json" >"$out/probe.json"
    rm -rf "$out/probe" "$out/small-sata.toml"
}

if [[ ! -f "$work/$base/done" ]]; then
    tree="$work/tree-$base"
    rm -rf "$tree"
    git worktree add -q --detach "$tree" "$base"
    echo "building base $base..." >&2
    build "$tree" "$work/target-base"
    outputs "$work/target-base/release/iosteer" "$work/$base"
    git worktree remove --force "$tree"
    touch "$work/$base/done"
fi

echo "building the working tree..." >&2
build "$root" "${CARGO_TARGET_DIR:-$root/target}"
rm -rf "$work/now"
outputs "${CARGO_TARGET_DIR:-$root/target}/release/iosteer" "$work/now"

status=0
for f in sim.txt sim-quick.json trace.json sweep.json probe.json; do
    if cmp -s "$work/$base/$f" "$work/now/$f"; then
        echo "same      $f"
    else
        echo "DIFFERENT $f (diff $work/$base/$f $work/now/$f)"
        status=1
    fi
done
exit $status

#!/usr/bin/env bash
# Runs every fuzz target of crates/fuzz in release mode, CASES_PER_TARGET
# cases each (by default enough for 10^6 in all), and prints each target's
# totals and their sum. CI runs the same targets with 256 cases each through
# `cargo test --workspace`.
#
#   scripts/fuzz.sh [CASES_PER_TARGET]
#
# IOSTEER_FUZZ_SEED replays a run (the seed is printed); IOSTEER_FUZZ_TIMEOUT_MS
# sets the time over which one call counts as a hang (2000 by default).
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
    cargo test --release -p iosteer-fuzz --test fuzz "$@"
}

run --no-run
# The regression tests replay fixed inputs: they are not targets.
targets=$(run -- --list 2>/dev/null | grep ': test$' | grep -vc '^regressions::')
cases=${1:-$(((1000000 + targets - 1) / targets))}
seed=${IOSTEER_FUZZ_SEED:-$(date +%s)}
timeout_ms=${IOSTEER_FUZZ_TIMEOUT_MS:-2000}
echo "fuzz: $targets targets, $cases cases each, generator seed $seed, hang timeout $timeout_ms ms"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
status=0
IOSTEER_FUZZ_CASES=$cases IOSTEER_FUZZ_SEED=$seed IOSTEER_FUZZ_TIMEOUT_MS=$timeout_ms \
    run -- --nocapture 2>&1 | tee "$log" || status=$?
wall=$(($(date +%s) - start))

echo
echo "fuzz totals (generator seed $seed):"
grep -E '^fuzz target [^ ]+: cases ' "$log" | sed 's/^fuzz target /  /' || true
grep -E '^fuzz target [^ ]+: cases ' "$log" | awk -v wall="$wall" -v timeout="$timeout_ms" '
    {
        for (i = 1; i <= NF; i++) {
            if ($i == "cases") cases += $(i + 1)
            if ($i == "panics") panics += $(i + 1)
            if ($i == "hangs") hangs += $(i + 1)
            if ($i == "violations") violations += $(i + 1)
        }
        targets++
    }
    END {
        printf "  all %d targets: cases %d, panics %d, hangs %d (timeout %d ms), violations %d, wall %d s\n",
            targets, cases, panics, hangs, timeout, violations, wall
    }'
exit "$status"

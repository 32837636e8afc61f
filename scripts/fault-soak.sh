#!/usr/bin/env bash
# Fault soak: the engine's fault-injection property tests (crates/engine/src/fault.rs)
# with OPS requests per scheduler policy (default 100000) on a virtual drive,
# every fault kind mixed in (EIO, EINVAL, short transfers, completions delayed
# up to 2 s and out of order, stalls up to 5 s, virtual time). Prints the faults
# injected per policy and in total; exits non-zero if any property failed.
#
#   scripts/fault-soak.sh [OPS]
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-100000}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
IOSTEER_FAULT_OPS="$ops" cargo test -p iosteer-engine --lib fault:: -- --nocapture --test-threads 2 \
    >"$log" 2>&1 || status=$?
grep -E '^fault totals:' "$log" | sed 's/^fault totals: //'
grep -E '^fault totals:' "$log" | awk '
    {
        for (i = 1; i <= NF; i++) {
            key = $i; sub(/:$/, "", key); value = $(i + 1); sub(/,$/, "", value)
            if (key == "requests" || key == "commands" || key == "failed_at_once" ||
                key == "failed_by_device" || key == "short_transfers" ||
                key == "delayed" || key == "stalls") total[key] += value
        }
        policies++
    }
    END {
        printf "total: %d policies, %d requests, %d commands: %d failed at once, %d failed by the device, %d short, %d delayed, %d stalls\n",
            policies, total["requests"], total["commands"], total["failed_at_once"],
            total["failed_by_device"], total["short_transfers"], total["delayed"], total["stalls"]
    }'
grep -E '^test result:' "$log" || true
if [ "$status" -ne 0 ]; then
    grep -E 'panicked|Test failed|minimal failing input' -A3 "$log" >&2 || tail -40 "$log" >&2
    exit "$status"
fi

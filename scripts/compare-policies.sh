#!/usr/bin/env bash
# Every policy on the fill-while-serving scenario, on consumer-sata and
# enterprise-nvme: write MB/s during the fill against read p99 / p99.9 and SLO
# violations, and whether read p99 stays within 2x the before-fill p99.
#
#   scripts/compare-policies.sh [SCENARIO] [extra iosteer sweep flags...]
#
# "netflix best static bandwidth" is found by the same sweep: the bandwidth
# grid below is part of each table, and the sweep marks the best setting that
# meets the objective (none may). Deterministic: same seed, same table.
# `iolatency` protects the readers with the objective's bound as their
# io.latency target (scripts/readers-iolatency.sh; one more fifo run each).
set -euo pipefail
cd "$(dirname "$0")/.."
scenario="${1:-fill-while-serving}"
shift || true
cargo build --release -q -p iosteer
bin=target/release/iosteer
if [ -n "${CARGO_TARGET_DIR:-}" ]; then bin="$CARGO_TARGET_DIR/release/iosteer"; fi
for device in consumer-sata enterprise-nvme; do
  iolatency=$(scripts/readers-iolatency.sh "$bin" "$scenario" "$device" "$@")
  "$bin" sweep "$scenario" --device "$device" --objective 'p99<=2x' --chart - \
    --sched fifo \
    --sched 'netflix:write.limiter=queue_depth,write.current=1' \
    --vary 'netflix:write.limiter=bandwidth,write.current=5000,10000,20000,40000,80000,160000' \
    --sched deadline --sched kyber --sched wbt --sched iocost --sched throttle \
    --sched bfq --sched "$iolatency" --sched steer "$@"
  echo
done

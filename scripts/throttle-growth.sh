#!/usr/bin/env bash
# Does `throttle`'s cost grow linearly with the run? Simulates
# bench/throttle-growth.fio (a 4 KiB random reader at full rate beside a
# writer at 40 MB/s throttled to WBPS bytes/s, so the held write backlog
# grows all run) for 1, 2, 4 and 8 simulated seconds on each drive, REPEAT
# times each, and prints per run length the median of the simulator's own
# wall time (aging excluded) and of the process's user CPU time, with the
# ratio to the run half as long (about 2 is linear, about 4 quadratic: the
# requests double with the run) and the user time per request. The drive
# starts empty (--precondition empty) so that no aging hides in the CPU
# time; on this shared machine the CPU time is the steadier figure.
#
#   scripts/throttle-growth.sh [SECONDS...]     (default: 1 2 4 8)
#   env: DEVICES (default "consumer-sata enterprise-nvme"), REPEAT (3),
#        WBPS (8000000), IOSTEER_BIN (default: the release build, built first;
#        give an older build to compare)
set -euo pipefail
cd "$(dirname "$0")/.."
lengths=("${@:-1 2 4 8}")
read -r -a lengths <<<"${lengths[*]}"
devices=${DEVICES:-consumer-sata enterprise-nvme}
repeat=${REPEAT:-3}
wbps=${WBPS:-8000000}
if [ -z "${IOSTEER_BIN:-}" ]; then
    cargo build --release -q -p iosteer
    IOSTEER_BIN="${CARGO_TARGET_DIR:-target}/release/iosteer"
fi
echo "throttle growth: $IOSTEER_BIN sim --job bench/throttle-growth.fio --sched throttle:wbps=$wbps --device D, IOSTEER_SECONDS=N, median of $repeat"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
measure() { # measure DEVICE SECONDS: "requests sim_wall_s user_s"
    local user
    user=$(IOSTEER_SECONDS=$2 /usr/bin/time -f 'user %U' "$IOSTEER_BIN" sim \
        --job bench/throttle-growth.fio --sched "throttle:wbps=$wbps" --device "$1" --precondition empty \
        2>&1 >"$out" | sed -nE 's/^user ([0-9.]+)$/\1/p')
    sed -nE 's/^([0-9]+) requests simulated in ([0-9.]+) s of wall time.*/\1 \2/p' "$out" | tr '\n' ' '
    echo "$user"
}

for device in $devices; do
    echo
    echo "drive $device"
    printf '%10s %10s %12s %8s %10s %8s %10s\n' "simulated" "requests" "sim wall s" "ratio" "user s" "ratio" "us/request"
    prev_wall=""
    prev_user=""
    for seconds in "${lengths[@]}"; do
        runs=()
        for _ in $(seq "$repeat"); do
            runs+=("$(measure "$device" "$seconds")")
        done
        read -r requests wall user < <(printf '%s\n' "${runs[@]}" | python3 -c "
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
print(rows[0][0], statistics.median(float(r[1]) for r in rows), statistics.median(float(r[2]) for r in rows))
")
        ratio() { [ -n "$2" ] && python3 -c "print(f'{$1 / max($2, 1e-9):.2f}')" || echo "-"; }
        printf '%9ss %10s %12.2f %8s %10.2f %8s %10.2f\n' "$seconds" "$requests" "$wall" \
            "$(ratio "$wall" "$prev_wall")" "$user" "$(ratio "$user" "$prev_user")" \
            "$(python3 -c "print($user * 1e6 / $requests)")"
        prev_wall=$wall
        prev_user=$user
    done
done

#!/usr/bin/env bash
# Memory does not grow with the run? Simulates bench/long-randread.fio (4 KiB
# random reads, iodepth 32) for a short and a long run and prints each one's
# peak resident set size (GNU time's "Maximum resident set size"); they
# should be within 10% of each other.
#
#   scripts/memory-flat.sh [SHORT_REQUESTS] [LONG_REQUESTS]
#                          (default: 1000000 100000000)
#   scripts/memory-flat.sh --trace [SHORT_REQUESTS] [LONG_REQUESTS]
#                          (default: 1000000 20000000)
#   scripts/memory-flat.sh --schedulers [SHORT_REQUESTS] [LONG_REQUESTS]
#                          (default: 200000 2000000 per job)
#
# With --schedulers, every scheduler of `iosteer schedulers` runs
# bench/mixed-memory.fio (a random reader beside a rated random writer) on
# enterprise-nvme filled to 50%, at both lengths, each judged on its own:
# a policy whose state grew with the run would show here.
#
# With --trace, the runs replay two ascii traces it writes to a temporary
# directory (4 KiB requests, 70% reads, 100,000 a second, spread over 32
# GiB; 27 bytes a request on disk) on enterprise-nvme filled to 90% first,
# so the drive's own tables are resident in both runs.
#
# Uses the release binary in $CARGO_TARGET_DIR (or target/), built first.
# The long run takes a few minutes: the simulator does about half a million
# requests per second of wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=false
scheds=false
case ${1:-} in
--trace) trace=true && shift ;;
--schedulers) scheds=true && shift ;;
esac
short=${1:-$($scheds && echo 200000 || echo 1000000)}
long=${2:-$($trace && echo 20000000 || ($scheds && echo 2000000) || echo 100000000)}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p iosteer
bin="$target/release/iosteer"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

peak_kb() { # peak_kb REQUESTS [SCHEDULER]
    local args=(--job bench/long-randread.fio)
    if $scheds; then
        args=(--job bench/mixed-memory.fio --device enterprise-nvme --precondition fill=50
            --sched "$2")
    fi
    if $trace; then
        awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
            printf "%.0f 0 %.0f 8 %d\n", i * 10000, (i * 7919 % 8000000) * 8, i % 10 < 7 }' \
            >"$dir/trace.ascii"
        args=(--trace "$dir/trace.ascii" --device enterprise-nvme --precondition fill=90
            --sched fifo)
    fi
    IOSTEER_REQUESTS=$1 /usr/bin/time -v "$bin" sim "${args[@]}" 2>&1 >/dev/null |
        sed -n 's/.*Maximum resident set size (kbytes): //p'
}

judge() { # judge SHORT_KB LONG_KB
    python3 -c "
s, l = $1, $2
growth = (l - s) / s
print(f'growth {growth:+.1%}:', 'flat' if abs(growth) <= 0.10 else 'NOT FLAT')
raise SystemExit(0 if abs(growth) <= 0.10 else 1)
"
}

if $scheds; then
    status=0
    for sched in $("$bin" schedulers | awk '/^[a-z]/ { print $1 }'); do
        short_kb=$(peak_kb "$short" "$sched")
        long_kb=$(peak_kb "$long" "$sched")
        printf '%-10s requests %s: %s KB, %s: %s KB; ' "$sched" "$short" "$short_kb" "$long" "$long_kb"
        judge "$short_kb" "$long_kb" || status=1
    done
    exit $status
fi
short_kb=$(peak_kb "$short")
long_kb=$(peak_kb "$long")
echo "requests $short: peak RSS $short_kb KB"
echo "requests $long: peak RSS $long_kb KB"
judge "$short_kb" "$long_kb"

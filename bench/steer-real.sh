#!/usr/bin/env bash
# Issue 25's real-disk check of `steer`: does it hold `p99<=2x` run after
# run on this machine's disk, and how steady is what it writes meanwhile,
# against static write limits measured in the same runs?
#
#   bench/steer-real.sh
#
# Each run, on each layout, with the kernel's scheduler set to none (where
# permitted; restored on exit): iosteer `fifo` with the reader alone
# (bench/read-alone.fio: random 64 KiB reads at 120 MiB/s, Poisson,
# iodepth 16, O_DIRECT), then the reader beside an unthrottled sequential
# 1 MiB writer (iodepth 8) under `steer` and under each static
# `netflix` bandwidth limit. Layouts: `apart`, the target of
# bench/vs-kernel.sh (3 GiB; reader in the first GiB, writer wrapping in the
# other two: bench/read-beside-write.fio); `halves`, a 2 GiB target, reader
# and writer in its two halves (bench/read-beside-write-halves.fio).
# A setup holds 2x in a run when its read p99 is at most twice that run's
# reads alone on the same layout.
#
# Environment: BENCH_DIR (where the targets go, default /var/tmp; the disk
# holding it is the one measured), BENCH_RUNS (default 5), RUNTIME (each
# run's length, fio's time grammar, default 15s), STATIC_MBPS (the static
# limits, MB/s, default "300 100 30 10"), STEER (the spec, default steer),
# LAYOUTS (default "apart halves"), IOSTEER (the binary; built when
# missing), BENCH_KEEP=1 keeps the JSON reports.
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_tools
find_iosteer

runs="${BENCH_RUNS:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$runs: expected a positive integer"
runtime="${RUNTIME:-15s}"
[[ "$runtime" =~ ^[1-9][0-9]*(ms|s|m|h)?$ ]] || die "RUNTIME=$runtime: expected a duration such as 15s or 2m"
read -r -a statics <<<"${STATIC_MBPS:-300 100 30 10}"
for mbps in "${statics[@]}"; do
    [[ "$mbps" =~ ^[1-9][0-9]*$ ]] || die "STATIC_MBPS: '$mbps' is not a whole number of MB/s"
done
steer="${STEER:-steer}"
read -r -a layouts <<<"${LAYOUTS:-apart halves}"
for layout in "${layouts[@]}"; do
    [[ "$layout" == apart || "$layout" == halves ]] || die "LAYOUTS: '$layout' is not one of: apart, halves"
done
parent="${BENCH_DIR:-/var/tmp}"
[[ -d "$parent" ]] || die "BENCH_DIR=$parent is not a directory"
need_disk_fs "$parent"
need_space "$parent" $(((3 << 30) + (2 << 30) + (2 << 30)))

disk=$(disk_of "$parent")
original=""
if [[ -n "$disk" && -r "/sys/block/$disk/queue/scheduler" ]]; then
    original=$(current_sched "$disk")
fi
work=$(mktemp -d "$parent/iosteer-steer-real.XXXXXX")
cleanup() {
    if [[ -n "$original" && "$(current_sched "$disk")" != "$original" ]]; then
        set_sched "$disk" "$original" || say "WARNING: restore $disk's scheduler by hand: echo $original > /sys/block/$disk/queue/scheduler"
    fi
    rm -f "$work"/*.img
    drop_work "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

kernel="${original:-unknown}"
if [[ -n "$original" ]] && set_sched "$disk" none; then
    kernel=none
fi
describe_machine
say "disk: ${disk:-unknown}, the kernel's scheduler under iosteer: $kernel; iosteer: $IOSTEER"

# The job files with this run length.
for job in read-alone read-beside-write read-beside-write-halves; do
    sed "s/^runtime=.*/runtime=$runtime/" "$BENCH_HERE/$job.fio" >"$work/$job.fio"
done
target_of() { echo "$work/$1.img"; }
prefill "$(target_of apart)" $((3 << 30))
prefill "$(target_of halves)" $((2 << 30))

results="$work/results.tsv"
: >"$results"
n=0
# LAYOUT RUN SETUP JOB SPEC -- one `iosteer run`, its figures filed.
run_one() {
    local layout="$1" run="$2" setup="$3" job="$4" spec="$5" json t
    n=$((n + 1))
    json="$work/$n.json"
    t=$(IOSTEER_BENCH_TARGET="$(target_of "$layout")" timed "$json" "$work/$n.err" \
        "$IOSTEER" run --target "$(target_of "$layout")" --job "$job" --sched "$spec" --json)
    python3 "$BENCH_HERE/results.py" iosteer "$json" | while read -r line; do
        echo "$layout $run $setup $line $t"
    done >>"$results"
    awk -v l="$layout" -v r="$run" -v s="$setup" '$1 == l && $2 == r && $3 == s {
        printf "    %-8s %-12s %-6s %8.1f MB/s  p99 %8.3f ms\n", l, s, $4, $6, $8 / 1e3
    }' "$results" >&2
}

for ((run = 1; run <= runs; run++)); do
    say "run $run of $runs"
    for layout in "${layouts[@]}"; do
        both="$work/read-beside-write.fio"
        [[ "$layout" == halves ]] && both="$work/read-beside-write-halves.fio"
        run_one "$layout" "$run" alone "$work/read-alone.fio" fifo
        run_one "$layout" "$run" steer "$both" "$steer"
        for mbps in "${statics[@]}"; do
            kbps=$((mbps * 1000))
            spec="netflix:write.limiter=bandwidth,write.current=$kbps"
            ((kbps > 300000)) && spec+=",write.max=$kbps"
            run_one "$layout" "$run" "static:$mbps" "$both" "$spec"
        done
    done
done

say ""
say "reader: random 64 KiB at 120 MiB/s, Poisson, iodepth 16; writer: sequential 1 MiB, iodepth 8; O_DIRECT, $runtime a run; steer: $steer"
python3 "$BENCH_HERE/results.py" steer-real "$results"

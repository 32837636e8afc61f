#!/usr/bin/env bash
# fio and `iosteer run --sched netflix` on the same job files and the same
# target, side by side (issue #7: iosteer should reach >= 95% of fio's IOPS
# with a p50 within 10% of fio's).
#
#   bench/vs-fio.sh [SIZE]
#
# SIZE (or BENCH_SIZE) is the target file's size, fio syntax, default 2g.
# Environment: BENCH_RUNS (runs of each tool per workload, default 5; medians
# are reported), BENCH_DIR (where the temporary directory goes, default
# /var/tmp: it must be on a disk, not tmpfs), IOSTEER (the binary; default
# ${CARGO_TARGET_DIR:-target}/release/iosteer, built when missing),
# BENCH_KEEP=1 keeps the JSON reports.
#
# Workloads, each 10 s (bench/*.fio, valid for both tools):
#   (a) randread-4k-qd32.fio: 4 KiB random reads, O_DIRECT, iodepth 32;
#   (b) randrw-4k-qd32.fio: 4 KiB random reads and writes 70/30, iodepth 32.
# fio runs with --output-format=json --lat_percentiles=1 --group_reporting
# (command-line options only change what it reports); the kernel's scheduler
# is left as it is, the same for both tools. The order alternates each run
# (fio first, then iosteer first) so that a drift in the machine's load does
# not favour one tool.
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_tools
find_iosteer

size=$(size_bytes "${1:-${BENCH_SIZE:-2g}}")
runs="${BENCH_RUNS:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$runs: expected a positive integer"
parent="${BENCH_DIR:-/var/tmp}"
[[ -d "$parent" ]] || die "BENCH_DIR=$parent is not a directory"
need_disk_fs "$parent"
need_space "$parent" $((size + (256 << 20)))

work=$(mktemp -d "$parent/iosteer-vs-fio.XXXXXX")
cleanup() {
    drop_work "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export IOSTEER_BENCH_TARGET="$work/target.img"
disk=$(disk_of "$parent")
describe_machine
say "target: $IOSTEER_BENCH_TARGET ($((size >> 20)) MiB) on ${disk:-an unknown device}, kernel scheduler $(current_sched "${disk:-none}")"
say "iosteer: $IOSTEER; fio: $(fio --version)"
prefill "$IOSTEER_BENCH_TARGET" "$size"

results="$work/results.tsv"
: >"$results"

run_fio() { # JOB LABEL RUN
    local json="$work/fio-$2-$3.json" t
    t=$(timed "$json" "$work/fio-$2-$3.err" fio --output-format=json --lat_percentiles=1 \
        --percentile_list=50:99:99.9 --group_reporting "$1")
    python3 "$BENCH_HERE/results.py" fio "$json" | while read -r line; do
        echo "$2 $3 fio $line $t"
    done >>"$results"
}

run_iosteer() { # JOB LABEL RUN
    local json="$work/iosteer-$2-$3.json" t
    t=$(timed "$json" "$work/iosteer-$2-$3.err" "$IOSTEER" run --target "$IOSTEER_BENCH_TARGET" \
        --job "$1" --sched netflix --json)
    python3 "$BENCH_HERE/results.py" iosteer "$json" | while read -r line; do
        echo "$2 $3 iosteer $line $t"
    done >>"$results"
}

show_run() { # LABEL RUN
    awk -v s="$1" -v r="$2" '$1 == s && $2 == r {
        printf "    %-8s %-6s %9.0f IOPS  p50 %7.1f us  p99 %8.1f us  (CPU %.2f s)\n", $3, $4, $5, $7, $8, $10
    }' "$results" >&2
}

for job in randread-4k-qd32 randrw-4k-qd32; do
    file="$BENCH_HERE/$job.fio"
    for ((run = 1; run <= runs; run++)); do
        say "$job: run $run of $runs"
        if ((run % 2)); then
            run_fio "$file" "$job" "$run"
            run_iosteer "$file" "$job" "$run"
        else
            run_iosteer "$file" "$job" "$run"
            run_fio "$file" "$job" "$run"
        fi
        show_run "$job" "$run"
    done
done

python3 "$BENCH_HERE/results.py" vs-fio "$results"

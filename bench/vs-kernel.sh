#!/usr/bin/env bash
# The pathology of issue #7 on this machine's own disk: random 64 KiB reads
# at 120 MiB/s (iodepth 16, Poisson arrivals) beside an unthrottled
# sequential 1 MiB writer (iodepth 8), both O_DIRECT on one file, under each
# of the kernel's schedulers (fio), then under iosteer's policies
# (`iosteer run`, the same job files).
#
#   bench/vs-kernel.sh
#
# Environment: BENCH_DIR (where the temporary directory goes, default
# /var/tmp; the disk holding it is the one measured), BENCH_RUNS (runs of
# each setup, default 1; medians are reported), NETFLIX_WRITE_KBPS (the
# write bandwidth limit of the netflix run, kB/s, default 300000 = 300 MB/s,
# upstream's maximum, about a sixth of what the writer does unthrottled here),
# IOSTEER (the binary; default ${CARGO_TARGET_DIR:-target}/release/iosteer,
# built when missing), BENCH_KEEP=1 keeps the JSON reports.
#
# Runs of 15 s each (bench/read-alone.fio, bench/read-beside-write.fio):
#   fio, reads alone (the kernel's scheduler as found);
#   fio, reads beside the writer, under each scheduler the disk lists in
#     /sys/block/DISK/queue/scheduler (switched only where writable; the one
#     found is restored on exit, whatever happens);
#   iosteer, reads alone, then beside the writer under `steer`,
#     `netflix:write.limiter=bandwidth,write.current=N` and `fifo`, with the
#     kernel's scheduler set to none (or left as found where that is not
#     permitted; the table says which).
# The target is one 3 GiB file, written in full first: the reader works in
# its first GiB, the writer wraps within the other two.
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_tools
find_iosteer

size=$((3 << 30))
runs="${BENCH_RUNS:-1}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$runs: expected a positive integer"
kbps="${NETFLIX_WRITE_KBPS:-300000}"
[[ "$kbps" =~ ^[1-9][0-9]*$ ]] || die "NETFLIX_WRITE_KBPS=$kbps: expected a positive integer (kB/s)"
netflix="netflix:write.limiter=bandwidth,write.current=$kbps"
# The limiter's upstream maximum is 300000 kB/s; a larger current needs a
# larger max (iosteer refuses current > max).
if ((kbps > 300000)); then
    netflix+=",write.max=$kbps"
fi
parent="${BENCH_DIR:-/var/tmp}"
[[ -d "$parent" ]] || die "BENCH_DIR=$parent is not a directory"
need_disk_fs "$parent"
# The file, and room to spare for everyone else on this disk.
need_space "$parent" $((size + (2 << 30)))

disk=$(disk_of "$parent")
original="unknown"
switchable=0
if [[ -n "$disk" && -r "/sys/block/$disk/queue/scheduler" ]]; then
    original=$(current_sched "$disk")
    read -r -a schedulers <<<"$(tr -d '[]' <"/sys/block/$disk/queue/scheduler")"
    if set_sched "$disk" "$original"; then
        switchable=1
    fi
else
    schedulers=()
fi

work=$(mktemp -d "$parent/iosteer-vs-kernel.XXXXXX")
cleanup() {
    if ((switchable)) && [[ "$(current_sched "$disk")" != "$original" ]]; then
        if set_sched "$disk" "$original"; then
            say "restored $disk's scheduler to $original"
        else
            say "WARNING: could not restore $disk's scheduler to $original: do it by hand:"
            say "    echo $original > /sys/block/$disk/queue/scheduler"
        fi
    fi
    drop_work "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

export IOSTEER_BENCH_TARGET="$work/target.img"
describe_machine
if [[ -z "$disk" ]]; then
    say "disk: cannot tell which block device holds $parent; the kernel's scheduler is left alone"
elif ((switchable)); then
    say "disk: $disk, scheduler $original (of: ${schedulers[*]}); it will be switched and restored"
else
    say "disk: $disk, scheduler $original (of: ${schedulers[*]:-none listed}); NOT writable here: every run uses $original"
fi
say "iosteer: $IOSTEER; fio: $(fio --version)"
prefill "$IOSTEER_BENCH_TARGET" "$size"

results="$work/results.tsv"
: >"$results"
n=0

# LABEL RUN JOB -- runs fio on JOB and files its figures under LABEL.
run_fio() {
    local label="$1" run="$2" job="$3" json t
    n=$((n + 1))
    json="$work/$n.json"
    t=$(timed "$json" "$work/$n.err" fio --output-format=json --lat_percentiles=1 \
        --percentile_list=50:99:99.9 "$job")
    python3 "$BENCH_HERE/results.py" fio "$json" | while read -r line; do
        echo "$label $run fio $line $t"
    done >>"$results"
    show "$label" "$run"
}

# LABEL RUN JOB SPEC -- the same with `iosteer run --sched SPEC`.
run_iosteer() {
    local label="$1" run="$2" job="$3" spec="$4" json t
    n=$((n + 1))
    json="$work/$n.json"
    t=$(timed "$json" "$work/$n.err" "$IOSTEER" run --target "$IOSTEER_BENCH_TARGET" \
        --job "$job" --sched "$spec" --json)
    python3 "$BENCH_HERE/results.py" iosteer "$json" | while read -r line; do
        echo "$label $run iosteer $line $t"
    done >>"$results"
    show "$label" "$run"
}

show() {
    awk -v s="$1" -v r="$2" '$1 == s && $2 == r {
        printf "    %-6s %6.1f MB/s  p50 %8.3f  p99 %8.3f  p99.9 %9.3f ms\n", $4, $6, $7 / 1e3, $8 / 1e3, $9 / 1e3
    }' "$results" >&2
}

alone="$BENCH_HERE/read-alone.fio"
both="$BENCH_HERE/read-beside-write.fio"
# Labels are one word (the TSV is split on blanks); the table shows them.
for ((run = 1; run <= runs; run++)); do
    say "run $run of $runs"
    say "  fio, reads alone ($original)"
    run_fio "fio:reads-alone(kernel:$original)" "$run" "$alone"
    for s in "${schedulers[@]}"; do
        if ((switchable)) && set_sched "$disk" "$s"; then
            label="fio:with-writer(kernel:$s)"
        elif [[ "$s" == "$original" ]]; then
            label="fio:with-writer(kernel:$s)"
        else
            say "  could not switch $disk to $s: skipped"
            continue
        fi
        say "  fio, reads beside the writer, kernel $s"
        run_fio "$label" "$run" "$both"
    done
    if [[ -z "$disk" ]]; then
        kernel="unknown"
    elif ((switchable)) && set_sched "$disk" none; then
        kernel="none"
    else
        kernel="$(current_sched "$disk")"
        say "  could not set $disk's scheduler to none: iosteer runs under $kernel"
    fi
    say "  iosteer fifo, reads alone (kernel $kernel)"
    run_iosteer "iosteer:reads-alone,fifo(kernel:$kernel)" "$run" "$alone" fifo
    for spec in steer "$netflix" fifo; do
        say "  iosteer $spec, reads beside the writer (kernel $kernel)"
        run_iosteer "iosteer:$spec(kernel:$kernel)" "$run" "$both" "$spec"
    done
    if ((switchable)); then
        set_sched "$disk" "$original" || say "could not restore $original yet; trying again on exit"
    fi
done

say ""
say "reader: random 64 KiB at 120 MiB/s, Poisson, iodepth 16; writer: sequential 1 MiB, iodepth 8, unthrottled; O_DIRECT, 15 s"
python3 "$BENCH_HERE/results.py" vs-kernel "$results"

#!/bin/sh
# Records block I/O through ftrace's block tracepoints (the ones blktrace
# uses) while a small fio workload runs on a temporary file, for machines
# where blktrace's BLKTRACESETUP ioctl is refused but debugfs/tracefs works.
#
# Usage (root): traces/record-ftrace.sh DEVICE OUT [SECONDS] [DIR]
#   DEVICE   block device to keep events of, e.g. vda (its major,minor is
#            looked up in /sys/class/block/DEVICE/dev)
#   OUT      text file to write (trace_pipe lines)
#   SECONDS  how long fio runs (default 3)
#   DIR      directory on DEVICE's file system for the temporary file
#            (default /var/tmp)
#
# It uses a tracing instance of its own (instances/iosteer-PID), so the
# global trace buffer and other users' events are left alone; it enables
# block_bio_queue, block_rq_issue and block_rq_complete filtered to DEVICE,
# so the trace holds both arrival events `iosteer sim --trace-event queue`
# and `--trace-event issue` read. Replay with:
#   iosteer sim --trace OUT --trace-format ftrace --trace-fit wrap
set -eu

dev=${1:?usage: record-ftrace.sh DEVICE OUT [SECONDS] [DIR]}
out=${2:?usage: record-ftrace.sh DEVICE OUT [SECONDS] [DIR]}
secs=${3:-3}
dir=${4:-/var/tmp}

tracefs=/sys/kernel/tracing
[ -d "$tracefs/events/block" ] || tracefs=/sys/kernel/debug/tracing
[ -d "$tracefs/events/block" ] || { echo "no tracefs with block events" >&2; exit 1; }

majmin=$(cat "/sys/class/block/$dev/dev")
major=${majmin%:*}
minor=${majmin#*:}
# The tracepoints' dev field is the kernel's dev_t: major << 20 | minor.
devt=$(( (major << 20) | minor ))

inst="$tracefs/instances/iosteer-$$"
mkdir "$inst"
cleanup() {
    echo 0 > "$inst/tracing_on" 2>/dev/null || true
    for e in block_bio_queue block_rq_issue block_rq_complete; do
        echo 0 > "$inst/events/block/$e/enable" 2>/dev/null || true
    done
    rmdir "$inst" 2>/dev/null || true
    rm -f "$dir/iosteer-ftrace.$$"
}
trap cleanup EXIT INT TERM

echo 4096 > "$inst/buffer_size_kb"
for e in block_bio_queue block_rq_issue block_rq_complete; do
    echo "dev == $devt" > "$inst/events/block/$e/filter"
    echo 1 > "$inst/events/block/$e/enable"
done
echo 1 > "$inst/tracing_on"

# Mixed 4 KiB random reads and writes with fsyncs (flushes), direct I/O so
# the requests reach the device, rate-limited (200 IOPS) to keep the sample small.
fio --name=iosteer-sample --filename="$dir/iosteer-ftrace.$$" --size=64m \
    --rw=randrw --rwmixread=60 --bs=4k --direct=1 --ioengine=psync \
    --fsync=16 --rate_iops=200 --time_based --runtime="$secs" \
    --output=/dev/null

echo 0 > "$inst/tracing_on"
# `trace` (not trace_pipe) reads the buffer without blocking; drop its
# comment header so the file is trace_pipe's line format.
grep -v '^#' "$inst/trace" > "$out"
lost=$(grep -c 'LOST' "$out" || true)
echo "wrote $(wc -l < "$out") lines to $out ($lost lost-event markers)" >&2

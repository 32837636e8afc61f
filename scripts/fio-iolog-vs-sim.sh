#!/usr/bin/env bash
# Does iosteer replay fio's iologs as fio does? Makes iologs with fio's own
# `write_iolog` (a few hundred 4 KiB requests on an 8 MiB file: psync and
# libaio, reads, writes, fsyncs, and trims on a loop device when it can
# make one), replays each with fio (`read_iolog`) and with `iosteer sim
# --job` (the same job file) and `iosteer sim --trace LOG --trace-format
# iolog`, and compares:
# - requests per direction (read, write, trim) and flushes (fio's syncs),
#   each against what the log's lines say it should issue, exactly: fio
#   3.33 drops an iolog's trim lines ("bad ddir: 2") and ignores
#   `replay_skip` for an iolog, where iosteer follows fio's later iolog
#   reader (trims replayed, replay_skip's kinds dropped); the cases that
#   meet either say so;
# - the order: fio's replay (its `--debug=io` "iolog: get" lines) must
#   fetch the log's requests in the log's order, offsets and lengths
#   (iosteer's order is the log's, checked by the workload crate's tests);
# - time, where it is observable: the replay's run time in fio and the
#   simulated phase's length, for a log recorded at a rate (its timings
#   kept), the same with `replay_no_stall=1` (as fast as the depth allows),
#   `replay_time_scale=50` (twice as slow), and a version 2 log whose `wait`
#   holds the last request until 300 ms. Times are printed, not judged:
#   fio's disk is not the simulated drive, so only their shape can agree
#   (which one is paced by the log, which one by the drive).
#
#   scripts/fio-iolog-vs-sim.sh
#
# Trims need a block device: as root, the script makes a loop device of an
# 8 MiB file (`losetup`, detached at the end) and runs the trim case on it;
# otherwise that case is left out, saying so. Needs fio and python3; exits 1
# when a count or the order differs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
need_fio fio-iolog-vs-sim
cargo build --release -q -p iosteer
iosteer=$(realpath "${CARGO_TARGET_DIR:-target}/release/iosteer")
tmp=$(mktemp -d)
loop=""
cleanup() {
    [ -n "$loop" ] && losetup -d "$loop"
    rm -rf "$tmp"
}
trap cleanup EXIT
truncate -s 8M "$tmp/file"
if [ "$(id -u)" = 0 ] && truncate -s 8M "$tmp/loop.img" && loop=$(losetup -f --show "$tmp/loop.img" 2>/dev/null); then
    :
else
    loop=""
    echo "no loop device (not root, or losetup refused): the trim case is left out" >&2
fi

# record NAME TARGET OPTIONS...: fio writes the iolog $tmp/NAME.log.
record() {
    local name=$1 target=$2
    shift 2
    printf '[%s]\nfilename=%s\nsize=8m\nbs=4k\nnorandommap\nnumber_ios=300\nwrite_iolog=%s\n' \
        "$name" "$target" "$tmp/$name.log" >"$tmp/$name-record.fio"
    printf '%s\n' "$@" >>"$tmp/$name-record.fio"
    rm -f "$tmp/$name.log"
    fio --output=/dev/null "$tmp/$name-record.fio"
}
record psync "$tmp/file" ioengine=psync rw=randrw rwmixread=60 fsync=16
record timed "$tmp/file" ioengine=libaio iodepth=16 direct=1 rw=randrw rate_iops=1000,1000
[ -n "$loop" ] && record trims "$loop" ioengine=libaio iodepth=8 direct=1 rw=randtrimwrite
# fio 3.33 writes version 3 only: a version 2 log by hand, `wait` in ms
# since the run's start.
{
    echo "fio version 2 iolog"
    echo "$tmp/file add"
    echo "$tmp/file open"
    for i in 0 1 2 3; do echo "$tmp/file read $((i * 4096)) 4096"; done
    echo "$tmp/file wait 300 0"
    echo "$tmp/file write 0 4096"
    echo "$tmp/file close"
} >"$tmp/v2.log"

differ=0
printf '%-24s %-16s %-16s %-16s %-6s %s\n' "case" "fio r/w/t/flush" "sim --job" "sim --trace" "order" "fio s / sim --job s / sim --trace s"
# replay NAME LOG ENGINE_OPTIONS...: one case.
replay() {
    local name=$1 log=$2
    shift 2
    printf '[%s]\nread_iolog=%s\n' "$name" "$log" >"$tmp/$name.fio"
    printf '%s\n' "$@" >>"$tmp/$name.fio"
    # --trace takes no replay_* options: it runs the log as it is, for the
    # cases without them.
    local trace_args=()
    for option in "$@"; do
        case $option in
            replay_*) trace_args=(skip) ;;
        esac
    done
    fio --output-format=json --output="$tmp/$name.json" "$tmp/$name.fio" >/dev/null 2>&1 ||
        { echo "$name: fio failed" >&2; differ=1; return; }
    fio --debug=io "$tmp/$name.fio" >"$tmp/$name.debug" 2>&1 || true
    "$iosteer" sim --job "$tmp/$name.fio" --device enterprise-nvme --sched fifo --json >"$tmp/$name.sim.json" 2>"$tmp/$name.sim.err" ||
        { echo "$name: iosteer sim --job failed: $(cat "$tmp/$name.sim.err")" >&2; differ=1; return; }
    if [ "${trace_args[*]:-}" != skip ]; then
        "$iosteer" sim --trace "$log" --trace-format iolog --device enterprise-nvme --sched fifo --json >"$tmp/$name.trace.json" 2>"$tmp/$name.trace.err" ||
            { echo "$name: iosteer sim --trace failed: $(cat "$tmp/$name.trace.err")" >&2; differ=1; return; }
    else
        echo '{}' >"$tmp/$name.trace.json"
    fi
    local verdict
    verdict=$(python3 - "$log" "$tmp/$name" "$*" <<'PY'
import json, re, sys
log, base, options = sys.argv[1:]
fio_text = open(base + ".json").read()
jobs = json.loads(fio_text[fio_text.index("{"):])["jobs"]
fio = [sum(j[d]["total_ios"] for j in jobs) for d in ("read", "write", "trim", "sync")]
fio_s = max(j["job_runtime"] for j in jobs) / 1000

def sim_counts(path, phase):
    doc = json.load(open(path))
    if not doc:
        return None, None
    p = next(p for p in doc["runs"][0]["phases"] if p["name"] == phase)
    counts = [p[d]["ops"] for d in ("read", "write", "trim")] + [p.get("flush", {}).get("ops", 0)]
    return counts, p["end_s"] - p["start_s"]

job, job_s = sim_counts(base + ".sim.json", "job")
trace, trace_s = sim_counts(base + ".trace.json", "trace")
skip = set()
m = re.search(r"replay_skip=(\S+)", options)
if m:
    skip = set(m.group(1).split(","))
# What each should issue, from the log's lines: iosteer replays trims and
# drops what replay_skip names (as fio's later iolog reader does); fio 3.33
# drops trim lines ("bad ddir: 2") and ignores replay_skip for an iolog.
kinds = ("read", "write", "trim", "sync")
def expect(lines, drop):
    counts = [0, 0, 0, 0]
    order = []
    for f in lines:
        action = "sync" if f[-3] == "datasync" else f[-3]
        if action in drop:
            continue
        counts[kinds.index(action)] += 1
        order.append((int(f[-2]), int(f[-1])))
    return counts, order
lines = [l.split() for l in open(log).read().splitlines()[1:]]
lines = [f for f in lines if len(f) >= 4 and f[-3] in ("read", "write", "trim", "sync", "datasync")]
fio_want, fio_order = expect(lines, {"trim"})
job_want, _ = expect(lines, skip)
trace_want, _ = expect(lines, set())
got = [(int(a), int(b)) for a, b in re.findall(r"iolog: get (\d+)/(\d+)/", open(base + ".debug").read())]
order = "same" if got == fio_order else f"DIFFER ({len(got)} vs {len(fio_order)})"
agree = fio == fio_want and job == job_want and (trace is None or trace == trace_want) and order == "same"
known = []
if lines and any(f[-3] == "trim" for f in lines):
    known.append("3.33 drops trims")
if skip:
    known.append("3.33 ignores replay_skip")
show = lambda c: "/".join(map(str, c)) if c else "-"
secs = lambda s: f"{s:.3f}" if s is not None else "-"
print(f"{show(fio):16} {show(job):16} {show(trace):16} {order:6} {fio_s:.3f} / {secs(job_s)} / {secs(trace_s)}"
      + (f"  ({'; '.join(known)})" if known else "") + ("" if agree else "  DIFFER"))
PY
) || verdict="DIFFER (the outputs could not be compared)"
    printf '%-24s %s\n' "$name" "$verdict"
    [[ $verdict == *DIFFER* ]] && differ=1
    return 0
}
replay psync-d1 "$tmp/psync.log" ioengine=psync
replay psync-skip-writes "$tmp/psync.log" ioengine=psync replay_skip=write
replay timed-d16 "$tmp/timed.log" ioengine=libaio iodepth=16 direct=1
replay timed-d1 "$tmp/timed.log" ioengine=psync direct=1
replay timed-no-stall "$tmp/timed.log" ioengine=libaio iodepth=16 direct=1 replay_no_stall=1
replay timed-half-speed "$tmp/timed.log" ioengine=libaio iodepth=16 direct=1 replay_time_scale=50
[ -n "$loop" ] && replay trims-d8 "$tmp/trims.log" ioengine=libaio iodepth=8 direct=1
replay v2-wait "$tmp/v2.log" ioengine=psync
exit $differ

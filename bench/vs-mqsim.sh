#!/usr/bin/env bash
# MQSim and iosteer side by side on MQSim's own workloads.
#
#   bench/vs-mqsim.sh MQSIM_TREE [--traces-only]
#
# MQSIM_TREE is an MQSim source tree (CMU-SAFARI/MQSim) the caller provides;
# it is copied to a temporary directory and built there with `make -j2`
# (g++, about 5 minutes on two cores). Nothing is fetched from the network.
# Our drive is imported from the tree's ssdconfig.xml (`iosteer device import
# mqsim`). The workloads: every traces/*.trace of the tree (DiskSim-style
# ASCII, times in ns) and, unless --traces-only, the first scenario of the
# tree's workload.xml (two flows of 4 KiB random writes at queue depths 16
# and 2 over half the drive for 10 s), given to iosteer as the fio job of the
# same description. Printed: mean device latency per direction (MQSim reports
# only the mean over both), requests per second of wall time, peak memory
# (/usr/bin/time -v, whole process: preconditioning included on both sides).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: bench/vs-mqsim.sh MQSIM_TREE [--traces-only]}
tree=$(cd "$tree" && pwd)
traces_only=false
[[ ${2:-} == --traces-only ]] && traces_only=true
[[ -f $tree/Makefile && -d $tree/src && -f $tree/ssdconfig.xml ]] ||
    { echo "$tree: not an MQSim source tree (Makefile, src/, ssdconfig.xml)" >&2; exit 2; }
for tool in make g++ python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "vs-mqsim: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building MQSim in $work/mqsim (a few minutes)..." >&2
cp -r "$tree" "$work/mqsim"
(cd "$work/mqsim" && make -j2 >"$work/make.log" 2>&1) ||
    { tail -20 "$work/make.log" >&2; exit 1; }
mqsim="$work/mqsim/MQSim"
[[ -x $mqsim ]] || mqsim=$(find "$work/mqsim" -maxdepth 2 -type f -name MQSim -perm -u+x | head -1)

echo "building iosteer (release)..." >&2
target=${CARGO_TARGET_DIR:-$root/target}
(cd "$root" && cargo build --release -q -p iosteer)
iosteer="$target/release/iosteer"
"$iosteer" device import mqsim "$work/mqsim/ssdconfig.xml" >"$work/drive.toml"

# wall seconds and peak KB from a /usr/bin/time -v log
time_of() { python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", text).group(1).strip()
parts = [float(p) for p in wall.split(":")]
seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
print(f"{seconds:.2f} {rss}")
PY
}

# MQSim's scenario report: requests and mean device response time (us).
mqsim_result() { python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
flows = [e for e in root.iter() if "Device_Response_Time" in e.attrib]
n = sum(int(f.attrib["Request_Count"]) for f in flows)
mean = sum(int(f.attrib["Request_Count"]) * float(f.attrib["Device_Response_Time"]) for f in flows) / max(n, 1)
print(f"{n} {mean:.1f}")
PY
}

# iosteer's report: requests, mean read, write and overall latency (us).
iosteer_result() { python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def mean(kind):
    ops = sum(p[kind]["ops"] for p in r["runs"][0]["phases"])
    total = sum(p[kind]["ops"] * p[kind]["lat_us"]["mean"] for p in r["runs"][0]["phases"])
    return ops, total / max(ops, 1)
n, overall = mean("all")
print(f"{n} {mean('read')[1]:.1f} {mean('write')[1]:.1f} {overall:.1f}")
PY
}

trace_workload() { # trace_workload TRACE > workload.xml
    cat <<XML
<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Trace_Based>
<Priority_Class>HIGH</Priority_Class>
<Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs><Chip_IDs>0,1,2,3</Chip_IDs>
<Die_IDs>0,1</Die_IDs><Plane_IDs>0,1</Plane_IDs>
<Initial_Occupancy_Percentage>50</Initial_Occupancy_Percentage>
<File_Path>$1</File_Path><Percentage_To_Be_Executed>100</Percentage_To_Be_Executed>
<Relay_Count>1</Relay_Count><Time_Unit>NANOSECOND</Time_Unit>
</IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>
XML
}

synthetic_job() {
    cat <<'FIO'
; MQSim workload.xml, scenario 1: 4 KiB random writes over half the drive.
[global]
rw=randwrite
bs=4k
size=50%
runtime=10s
time_based
[flow-qd16]
iodepth=16
[flow-qd2]
iodepth=2
FIO
}

run_pair() { # run_pair NAME MQSIM_WORKLOAD IOSTEER_ARGS...
    local name=$1 workload=$2
    shift 2
    (cd "$work/mqsim" && /usr/bin/time -v "$mqsim" -i ssdconfig.xml -w "$workload" \
        >"$work/$name.mqsim.out" 2>"$work/$name.mqsim.time")
    local report="${workload%.*}_scenario_1.xml"
    read -r m_n m_mean < <(mqsim_result "$report")
    read -r m_wall m_rss < <(time_of "$work/$name.mqsim.time")
    /usr/bin/time -v "$iosteer" sim "$@" --device "$work/drive.toml" --sched fifo --json \
        >"$work/$name.iosteer.json" 2>"$work/$name.iosteer.time"
    read -r i_n i_read i_write i_mean < <(iosteer_result "$work/$name.iosteer.json")
    read -r i_wall i_rss < <(time_of "$work/$name.iosteer.time")
    printf '| %s | MQSim | %s | - | - | %s | %.0f | %d |\n' "$name" "$m_n" "$m_mean" \
        "$(awk -v n="$m_n" -v s="$m_wall" 'BEGIN { print n / s }')" $((m_rss / 1024))
    printf '| %s | iosteer | %s | %s | %s | %s | %.0f | %d |\n' "$name" "$i_n" "$i_read" "$i_write" "$i_mean" \
        "$(awk -v n="$i_n" -v s="$i_wall" 'BEGIN { print n / s }')" $((i_rss / 1024))
}

printf '| workload | simulator | requests | read us | write us | mean us | requests/s (wall) | peak MB |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for trace in "$work"/mqsim/traces/*.trace; do
    name=$(basename "$trace" .trace)
    trace_workload "$trace" >"$work/mqsim/$name-workload.xml"
    run_pair "$name" "$work/mqsim/$name-workload.xml" \
        --trace "$trace" --trace-unit ns --trace-fit wrap
done
if ! $traces_only; then
    synthetic_job >"$work/synthetic.fio"
    run_pair synthetic "$work/mqsim/workload.xml" --job "$work/synthetic.fio"
fi

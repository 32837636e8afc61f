#!/usr/bin/env bash
# MQSim and iosteer side by side on MQSim's own workloads.
#
#   bench/vs-mqsim.sh MQSIM_TREE [--traces-only]
#
# MQSIM_TREE is an MQSim source tree (CMU-SAFARI/MQSim) the caller provides;
# it is copied to a temporary directory and built there with `make -j2`
# (g++, a few minutes on two cores). Nothing is fetched from the network.
# MQSIM_BINARY=PATH skips the build and runs that binary instead (for
# iterating on this script; the table then says so).
#
# Our drive is imported from the tree's ssdconfig.xml (`iosteer device import
# mqsim`). The workloads (bench/mqsim.py plan): every scenario of the tree's
# workload.xml (MQSim runs them one after another, each on a new drive; here
# each runs as its own MQSim process, so each gets its own wall time and
# memory), and every traces/*.trace no scenario replays. A synthetic flow
# becomes a fio job of the same shape (one job per flow, run together); a
# trace flow `iosteer sim --trace` (ascii, addresses past the end wrapped, as
# MQSim does). Our drive starts at `--precondition fill=PCT`, PCT the
# scenario's Initial_Occupancy_Percentage (see README, "Against DiskSim and
# MQSim", for what matches MQSim's start and what does not).
#
# Printed: mean device latency per direction (MQSim reports one mean per
# flow, so a direction only when its flows are of that direction alone),
# requests per second of wall time and of CPU time, peak memory
# (/usr/bin/time -v, whole process, preconditioning included on both sides),
# the totals over the default workload's scenarios with the speed ratio, and
# per run what MQSim's drive did that ours does not model (mapping-table
# cache misses and the flash reads they cost) and its flash queues' waits.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: bench/vs-mqsim.sh MQSIM_TREE [--traces-only]}
tree=$(cd "$tree" && pwd)
traces_only=false
[[ ${2:-} == --traces-only ]] && traces_only=true
[[ -f $tree/Makefile && -d $tree/src && -f $tree/ssdconfig.xml && -f $tree/workload.xml ]] ||
    { echo "$tree: not an MQSim source tree (Makefile, src/, ssdconfig.xml, workload.xml)" >&2; exit 2; }
for tool in make g++ python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "vs-mqsim: $tool is not installed" >&2; exit 2; }
done
py="python3 $root/bench/mqsim.py"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$tree" "$work/mqsim"
if [[ -n ${MQSIM_BINARY:-} ]]; then
    [[ -x $MQSIM_BINARY ]] || { echo "MQSIM_BINARY=$MQSIM_BINARY is not an executable" >&2; exit 2; }
    mqsim=$MQSIM_BINARY
    echo "(MQSim binary given: $mqsim, not built from $tree)"
else
    echo "building MQSim in $work/mqsim (a few minutes)..." >&2
    (cd "$work/mqsim" && make -j2 >"$work/make.log" 2>&1) ||
        { tail -20 "$work/make.log" >&2; exit 1; }
    mqsim=$(find "$work/mqsim" -maxdepth 2 -type f -name MQSim -perm -u+x | head -1)
    [[ -n $mqsim ]] || { echo "vs-mqsim: make built no MQSim binary" >&2; exit 1; }
fi

echo "building iosteer (release)..." >&2
target=${CARGO_TARGET_DIR:-$root/target}
(cd "$root" && cargo build --release -q -p iosteer)
iosteer="$target/release/iosteer"
"$iosteer" device import mqsim "$work/mqsim/ssdconfig.xml" >"$work/drive.toml"
mkdir "$work/plan"
mapfile -t runs < <($py plan "$work/mqsim/workload.xml" "$work/mqsim" "$work/plan")

notes=()
totals=() # per simulator: requests wall cpu peak-KB over the default scenarios
add_total() { # add_total INDEX REQUESTS WALL CPU KB
    local old=${totals[$1]:-0 0 0 0}
    totals[$1]=$(awk -v o="$old" -v n="$2" -v w="$3" -v c="$4" -v k="$5" \
        'BEGIN { split(o, a, " "); m = a[4] > k ? a[4] : k; print a[1] + n, a[2] + w, a[3] + c, m }')
}
row() { # row NAME SIMULATOR REQUESTS READ WRITE MEAN WALL CPU KB
    awk -v n="$3" -v w="$7" -v c="$8" -v k="$9" -v name="$1" -v sim="$2" -v r="$4" -v wr="$5" -v m="$6" \
        'BEGIN { printf "| %s | %s | %d | %s | %s | %s | %.1f | %.0f | %.0f | %.0f |\n", name, sim, n, r, wr, m, w, n / w, n / c, k / 1024 }'
}

echo "| workload | simulator | requests | read us | write us | mean us | wall s | requests/s (wall) | requests/s (CPU) | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for name in "${runs[@]}"; do
    default=false
    [[ $name == scenario* ]] && default=true
    $traces_only && $default && [[ $name != *-* ]] && continue
    (cd "$work/mqsim" && /usr/bin/time -v "$mqsim" -i ssdconfig.xml -w "$work/plan/$name.xml" \
        >"$work/$name.mqsim.out" 2>"$work/$name.mqsim.time") ||
        { tail -5 "$work/$name.mqsim.out" "$work/$name.mqsim.time" >&2; exit 1; }
    read -r m_n m_read m_write m_mean < <($py mqsim "$work/plan/${name}_scenario_1.xml")
    read -r m_wall m_cpu m_kb < <($py time "$work/$name.mqsim.time")
    notes+=("$name, MQSim: $($py mqsim-notes "$work/plan/${name}_scenario_1.xml")")
    mapfile -t args <"$work/plan/$name.args"
    /usr/bin/time -v "$iosteer" sim "${args[@]}" --device "$work/drive.toml" --sched fifo --json \
        >"$work/$name.iosteer.json" 2>"$work/$name.iosteer.time" ||
        { tail -5 "$work/$name.iosteer.time" >&2; exit 1; }
    read -r i_n i_read i_write i_mean < <($py iosteer "$work/$name.iosteer.json")
    read -r i_wall i_cpu i_kb < <($py time "$work/$name.iosteer.time")
    notes+=("$name, iosteer: $($py iosteer-notes "$work/$name.iosteer.json")")
    row "$name" MQSim "$m_n" "$m_read" "$m_write" "$m_mean" "$m_wall" "$m_cpu" "$m_kb"
    row "$name" iosteer "$i_n" "$i_read" "$i_write" "$i_mean" "$i_wall" "$i_cpu" "$i_kb"
    if $default; then
        add_total 0 "$m_n" "$m_wall" "$m_cpu" "$m_kb"
        add_total 1 "$i_n" "$i_wall" "$i_cpu" "$i_kb"
    fi
done
# The totals need every scenario of the default workload.
if ! $traces_only && [[ -n ${totals[0]:-} ]]; then
    read -r m_n m_wall m_cpu m_kb <<<"${totals[0]}"
    read -r i_n i_wall i_cpu i_kb <<<"${totals[1]}"
    row "workload.xml, all scenarios" MQSim "$m_n" - - - "$m_wall" "$m_cpu" "$m_kb"
    row "workload.xml, all scenarios" iosteer "$i_n" - - - "$i_wall" "$i_cpu" "$i_kb"
    awk -v mn="$m_n" -v mw="$m_wall" -v mc="$m_cpu" -v mk="$m_kb" -v in_="$i_n" -v iw="$i_wall" -v ic="$i_cpu" -v ik="$i_kb" \
        'BEGIN { printf "\nspeed, iosteer / MQSim (requests per second, default workload): %.1fx of wall time, %.1fx of CPU time; peak memory %.3fx\n", (in_ / iw) / (mn / mw), (in_ / ic) / (mn / mc), ik / mk }'
fi
echo
printf -- '- %s\n' "${notes[@]}"

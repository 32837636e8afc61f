#!/usr/bin/env bash
# Other people's job files: runs `iosteer sim --job` on every job file of a
# fio source tree's examples/ folder (or of any folder of *.fio files) and
# sorts the outcomes, so a refusal that is unclear, a panic or a hang shows
# up in one table.
#
#   scripts/fio-examples-survey.sh FIO_TREE_OR_FOLDER [DEVICE]
#
# DEVICE defaults to consumer-sata. TIMEOUT (seconds, default 120) bounds
# each run; a job file sized for hours of I/O is reported as a timeout, not
# a hang. Outcomes:
#   ran       the simulation finished (exit 0)
#   refused   a clear error: the first line of the message is printed
#   PANIC     exit code 101 or "panicked" in the output: a bug
#   timeout   the run did not end within TIMEOUT
# The script exits 1 if any file panicked.
set -euo pipefail
source=$(realpath "${1:?usage: scripts/fio-examples-survey.sh FIO_TREE_OR_FOLDER [DEVICE]}")
cd "$(dirname "$0")/.."
device=${2:-consumer-sata}
timeout_s=${TIMEOUT:-120}
folder=$source
[[ -d $source/examples ]] && folder=$source/examples
shopt -s nullglob
files=("$folder"/*.fio)
if [ ${#files[@]} -eq 0 ]; then
    echo "fio-examples-survey: no *.fio files in $folder" >&2
    exit 2
fi
cargo build --release -q -p iosteer
bin=${CARGO_TARGET_DIR:-target}/release/iosteer
out=$(mktemp)
trap 'rm -f "$out"' EXIT
panics=0
declare -A count
for file in "${files[@]}"; do
    name=$(basename "$file")
    status=0
    timeout "$timeout_s" "$bin" sim --job "$file" --device "$device" --sched fifo >"$out" 2>&1 ||
        status=$?
    if [[ $status -eq 101 ]] || grep -q "panicked" "$out"; then
        outcome=PANIC
        panics=$((panics + 1))
        detail=$(grep -m1 "panicked" "$out" || true)
    elif [[ $status -eq 124 ]]; then
        outcome=timeout
        detail="still running after ${timeout_s} s"
    elif [[ $status -eq 0 ]]; then
        outcome=ran
        detail=$(grep -m1 "requests simulated" "$out" || true)
    else
        outcome=refused
        detail=$(grep -m1 "error" "$out" || head -1 "$out")
    fi
    count[$outcome]=$((${count[$outcome]:-0} + 1))
    printf '%-8s %-34s %s\n' "$outcome" "$name" "$detail"
done
echo
for outcome in ran refused PANIC timeout; do
    printf '%-8s %d\n' "$outcome" "${count[$outcome]:-0}"
done
[[ $panics -eq 0 ]]

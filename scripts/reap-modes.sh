#!/usr/bin/env bash
# Latency and CPU of each completion reaping mode of `iosteer run`, one after
# the other on the same file: 4 KiB random reads, O_DIRECT, at queue depth 1
# (where the way a completion is noticed is most of the latency) and 32.
#
#   scripts/reap-modes.sh [FILE] [SECONDS]
#
# FILE defaults to a 512 MiB file in the temp directory, written first (a
# never-written block reads without touching the disk) and removed at the
# end. Needs python3 to read the JSON reports. Installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${2:-5}"
command -v python3 >/dev/null || { echo "needs python3 (apt-get install python3)" >&2; exit 1; }
cargo build --release -q -p iosteer
bin="${CARGO_TARGET_DIR:-target}/release/iosteer"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
file="${1:-$work/reap.img}"
if [ -z "${1:-}" ]; then
  cat > "$work/fill.fio" <<JOB
[fill]
ioengine=io_uring
rw=write
bs=1m
iodepth=8
size=512m
JOB
  "$bin" run --target "$file" --size 512m --job "$work/fill.fio" --json > /dev/null 2>&1
fi
for depth in 1 32; do
  cat > "$work/read.fio" <<JOB
[reader]
ioengine=io_uring
rw=randread
bs=4k
iodepth=$depth
size=512m
runtime=${seconds}s
time_based
JOB
  echo "4 KiB random reads, iodepth $depth, ${seconds} s per mode, $(date -u +%Y-%m-%d), $(nproc) cores"
  printf '%-16s %10s %9s %9s %9s %11s %7s\n' mode IOPS "p50 us" "p99 us" "p99.9 us" "CPU cores" note
  for mode in interrupt hybrid poll "poll --iopoll"; do
    # shellcheck disable=SC2086
    "$bin" run --target "$file" --job "$work/read.fio" --queue-depth "$depth" \
      --reap $mode --json > "$work/out.json" 2> "$work/err.txt" || { cat "$work/err.txt" >&2; exit 1; }
    note=""
    if grep -q "using an ordinary ring" "$work/err.txt"; then note="IOPOLL refused"; fi
    python3 - "$work/out.json" "$mode" "$note" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
read = next(p for p in run["phases"] if p["name"] == "all")["read"]
lat = read["lat_us"]
print(f'{sys.argv[2]:<16} {read["iops"]:>10.0f} {lat["p50"]:>9.1f} {lat["p99"]:>9.1f} {lat["p999"]:>9.1f} {run["cpu"]["cores"]:>11.2f} {sys.argv[3]}')
PY
  done
  echo
done

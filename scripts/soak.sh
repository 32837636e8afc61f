#!/usr/bin/env bash
# Soak: `iosteer run --verify` of bench/soak.fio (a full-rate writer and
# reader) on a file for SECONDS (default 600), sampling the process's
# resident memory (VmRSS), open file descriptors (/proc/PID/fd) and threads
# (/proc/PID/task) once a second into DIR/series.csv. Threads are counted in
# two: the process's own, and the kernel's io_uring workers (iou-wrk-*),
# which io_uring starts and retires with the load (for example while writes
# allocate a sparse file's blocks). After the warm-up (the first 60 s, or a
# third of a shorter run) the series must be flat: own threads and
# descriptors constant, memory within 10% (max over min), and io_uring
# workers never above what the warm-up saw.
#
# Then a second run on the same file is killed with SIGKILL KILL_AT seconds
# in (default 20), and `iosteer verify` reads the whole file back: every
# stamped block must hold its own offset and checksum (0 bad); blocks never
# written are counted apart.
#
#   scripts/soak.sh [SECONDS] [DIR] [SIZE]
#       (default: 600, $CARGO_TARGET_DIR/soak or target/soak, 2g)
#
# DIR must be on a file system that takes O_DIRECT (not tmpfs). Uses the
# release binary, built first (or IOSTEER_BIN). Exits non-zero if any check
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target_dir=${CARGO_TARGET_DIR:-target}
dir=${2:-$target_dir/soak}
size=${3:-2g}
kill_at=${KILL_AT:-20}
job=bench/soak.fio

case $seconds in ''|*[!0-9]*) echo "soak.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2;; esac
[ "$seconds" -ge 10 ] || { echo "soak.sh: SECONDS must be at least 10" >&2; exit 2; }
mkdir -p "$dir"
fs=$(stat -f -c %T "$dir")
if [ "$fs" = tmpfs ] || [ "$fs" = ramfs ]; then
    echo "soak.sh: $dir is on $fs, which takes no O_DIRECT; give a DIR on a disk" >&2
    exit 2
fi
size_bytes=$(numfmt --from=iec "${size^^}")
free_bytes=$(($(stat -f -c '%a * %S' "$dir")))
if [ "$free_bytes" -lt $((size_bytes + (1 << 30))) ]; then
    echo "soak.sh: $dir has $free_bytes bytes free; the $size file needs it plus 1 GiB" >&2
    exit 2
fi

if [ -z "${IOSTEER_BIN:-}" ]; then
    cargo build --release -q -p iosteer
    IOSTEER_BIN="$target_dir/release/iosteer"
fi
# A copy: a rebuild during the soak does not change what the second phase runs.
bin="$dir/iosteer"
cp "$IOSTEER_BIN" "$bin"
file="$dir/soak.img"
csv="$dir/series.csv"
rm -f "$file"

sample() { # sample PID T: one CSV line, or nothing once the process is gone
    local rss fds threads workers
    local line comm fd
    rss=""
    while read -r line; do
        [[ $line == VmRSS:* ]] && { read -r _ rss _ <<<"$line"; break; }
    done <"/proc/$1/status" 2>/dev/null || return 0
    fds=0
    for fd in /proc/"$1"/fd/*; do [ -e "$fd" ] || [ -L "$fd" ] && fds=$((fds + 1)); done
    threads=0
    workers=0
    for comm in /proc/"$1"/task/*/comm; do
        read -r line <"$comm" 2>/dev/null || continue
        if [[ $line == iou-* ]]; then workers=$((workers + 1)); else threads=$((threads + 1)); fi
    done
    [ -n "$rss" ] && echo "$2,$rss,$fds,$threads,$workers"
}

echo "soak: $bin run --verify --job $job --target $file --size $size --duration ${seconds}s"
echo "soak: phase 1, $seconds s, sampling every second into $csv"
echo "t_s,rss_kb,fds,threads,io_workers" >"$csv"
"$bin" run --verify --job "$job" --target "$file" --size "$size" --duration "${seconds}s" \
    >"$dir/run.out" 2>"$dir/run.err" &
pid=$!
# t_s is seconds since the start, from the clock: on a busy machine a
# sample can come late, and then the next one follows at once.
start_us=${EPOCHREALTIME/./}
next=1
while kill -0 "$pid" 2>/dev/null; do
    now_us=${EPOCHREALTIME/./}
    sample "$pid" $(((now_us - start_us) / 1000000)) >>"$csv"
    wait_us=$((start_us + next * 1000000 - ${EPOCHREALTIME/./}))
    next=$((next + 1))
    [ "$wait_us" -gt 0 ] && sleep "$((wait_us / 1000000)).$(printf '%06d' $((wait_us % 1000000)))"
done
run_status=0
wait "$pid" || run_status=$?
grep -E '^verify:' "$dir/run.out" || true
if [ "$run_status" -ne 0 ]; then
    echo "soak: the run failed (exit $run_status):" >&2
    tail -5 "$dir/run.err" >&2
fi

warmup=$((seconds >= 180 ? 60 : seconds / 3))
flat_status=0
python3 - "$csv" "$warmup" <<'PY' || flat_status=$?
import csv, sys
rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open(sys.argv[1]))]
warmup = int(sys.argv[2])
late = [r for r in rows if r["t_s"] >= warmup]
if len(late) < 2:
    sys.exit(f"soak: only {len(late)} samples after the {warmup} s warm-up")
print(f"soak: {len(rows)} samples, {len(late)} after the {warmup} s warm-up")
print("| minute | RSS min KiB | RSS max KiB | fds | own threads | io_uring workers |")
print("|---|---|---|---|---|---|")
for m in range(0, rows[-1]["t_s"] // 60 + 1):
    rs = [r for r in rows if r["t_s"] // 60 == m]
    if not rs:
        continue
    span = lambda k: f'{min(r[k] for r in rs)}-{max(r[k] for r in rs)}'
    print(f'| {m} | {min(r["rss_kb"] for r in rs)} | {max(r["rss_kb"] for r in rs)} | '
          f'{span("fds")} | {span("threads")} | {span("io_workers")} |')
ok = True
rss = [r["rss_kb"] for r in late]
ratio = max(rss) / min(rss)
n = len(late)
mean_t = sum(r["t_s"] for r in late) / n
mean_r = sum(rss) / n
slope = sum((r["t_s"] - mean_t) * (r["rss_kb"] - mean_r) for r in late) / max(
    1e-9, sum((r["t_s"] - mean_t) ** 2 for r in late))
verdict = "flat" if ratio <= 1.10 else "NOT FLAT"
ok &= ratio <= 1.10
print(f"soak: RSS after warm-up {min(rss)}-{max(rss)} KiB, max/min {ratio:.3f} (tolerance 1.10), "
      f"fitted slope {slope * 60:+.1f} KiB/min: {verdict}")
for key in ("fds", "threads"):
    values = {r[key] for r in late}
    verdict = "flat" if len(values) == 1 else "NOT FLAT"
    ok &= len(values) == 1
    print(f"soak: {key} after warm-up {min(values)}-{max(values)}: {verdict}")
early = max(r["io_workers"] for r in rows if r["t_s"] < warmup)
workers = [r["io_workers"] for r in late]
verdict = "bounded" if max(workers) <= early else "GROWING"
ok &= max(workers) <= early
print(f"soak: io_uring workers after warm-up {min(workers)}-{max(workers)} "
      f"(warm-up at most {early}): {verdict}")
sys.exit(0 if ok else 1)
PY

kill_status=0
echo "soak: phase 2, the same run killed with SIGKILL after $kill_at s, then a read-back"
"$bin" run --verify --job "$job" --target "$file" --size "$size" --duration "${seconds}s" \
    >/dev/null 2>"$dir/killed.err" &
pid=$!
sleep "$kill_at"
if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    echo "soak: killed pid $pid mid-run"
else
    echo "soak: the second run ended before the kill" >&2
    kill_status=1
fi
verify_status=0
"$bin" verify --target "$file" | tee "$dir/verify.out" || verify_status=$?

echo "soak: run exit $run_status, flat check exit $flat_status, kill exit $kill_status, read-back exit $verify_status"
rm -f "$file" "$bin"
[ "$run_status" -eq 0 ] && [ "$flat_status" -eq 0 ] && [ "$kill_status" -eq 0 ] && [ "$verify_status" -eq 0 ]

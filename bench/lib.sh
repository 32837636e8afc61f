# Shared by vs-fio.sh and vs-kernel.sh (sourced, not run).
# shellcheck shell=bash

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Used by the scripts that source this file.
# shellcheck disable=SC2034
BENCH_HERE="$BENCH_ROOT/bench"

say() { printf '%s\n' "$*" >&2; }
die() {
    say "$(basename "$0"): $*"
    exit 1
}

# fio and python3 must be there; nothing is installed behind your back.
need_tools() {
    if ! command -v fio >/dev/null 2>&1; then
        say "$(basename "$0"): fio is not installed; install it first, e.g.:"
        say "    apt-get install fio"
        exit 2
    fi
    if ! command -v python3 >/dev/null 2>&1; then
        say "$(basename "$0"): python3 is needed to read the JSON reports; install it first, e.g.:"
        say "    apt-get install python3"
        exit 2
    fi
}

# The iosteer binary: $IOSTEER, or ${CARGO_TARGET_DIR:-target}/release/iosteer
# (built with cargo when it is missing).
find_iosteer() {
    if [[ -n "${IOSTEER:-}" ]]; then
        [[ -x "$IOSTEER" ]] || die "IOSTEER=$IOSTEER is not an executable"
        return
    fi
    local dir="${CARGO_TARGET_DIR:-target}"
    [[ "$dir" = /* ]] || dir="$BENCH_ROOT/$dir"
    IOSTEER="$dir/release/iosteer"
    if [[ ! -x "$IOSTEER" ]]; then
        say "building $IOSTEER (cargo build --release -q -p iosteer)..."
        (cd "$BENCH_ROOT" && cargo build --release -q -p iosteer)
    fi
    [[ -x "$IOSTEER" ]] || die "no iosteer binary at $IOSTEER"
}

# A size with fio's suffixes (powers of 1024) in bytes: 2g, 512m, 1073741824.
size_bytes() {
    local v="${1,,}" n unit
    v="${v%ib}"
    v="${v%b}"
    n="${v%[kmgt]}"
    unit="${v:${#n}}"
    [[ "$n" =~ ^[0-9]+$ ]] || die "size '$1': expected a whole number with k, m, g or t"
    case "$unit" in
        "") echo "$n" ;;
        k) echo $((n << 10)) ;;
        m) echo $((n << 20)) ;;
        g) echo $((n << 30)) ;;
        t) echo $((n << 40)) ;;
    esac
}

# Refuses, politely, when DIR has less than BYTES free.
need_space() {
    local dir="$1" bytes="$2" avail
    avail=$(df --output=avail -B1 "$dir" | tail -n 1 | tr -d ' ')
    if ((avail < bytes)); then
        say "$(basename "$0"): $dir has $((avail >> 20)) MiB free; this bench needs $((bytes >> 20)) MiB."
        say "Free some space, choose another directory with BENCH_DIR=..., or a smaller size."
        exit 1
    fi
}

# O_DIRECT needs a disk file system: refuse tmpfs and the like.
need_disk_fs() {
    local fs
    fs=$(stat -f -c %T "$1")
    case "$fs" in
        tmpfs | ramfs | overlayfs | overlay)
            die "$1 is on $fs; O_DIRECT on a disk is what is measured: choose a directory on a disk with BENCH_DIR=..."
            ;;
    esac
}

# The block device (whole disk, not a partition) holding DIR, e.g. vda; empty
# when there is none (an overlay or network file system).
disk_of() {
    local majmin link name
    majmin=$(stat -c '%Hd:%Ld' "$1" 2>/dev/null) || return 0
    link=$(readlink -f "/sys/dev/block/$majmin" 2>/dev/null) || return 0
    [[ -d "$link" ]] || return 0
    if [[ -e "$link/partition" ]]; then
        link=$(dirname "$link")
    fi
    name=$(basename "$link")
    [[ -e "/sys/block/$name" ]] && echo "$name"
    return 0
}

# The kernel scheduler now in use for disk NAME ("none" when it has no list).
current_sched() {
    local f="/sys/block/$1/queue/scheduler"
    [[ -r "$f" ]] || {
        echo "unknown"
        return
    }
    sed -n 's/.*\[\(.*\)\].*/\1/p' "$f"
}

# Tries to switch disk NAME to scheduler SCHED; non-zero when not permitted.
set_sched() {
    local f="/sys/block/$1/queue/scheduler"
    [[ -w "$f" ]] || return 1
    { echo "$2" >"$f"; } 2>/dev/null || return 1
    [[ "$(current_sched "$1")" == "$2" ]]
}

# Writes every block of FILE (BYTES long) once, sequentially, with O_DIRECT:
# reads of blocks never written measure nothing, and overwrites then find
# their blocks allocated.
prefill() {
    local file="$1" bytes="$2" started
    say "writing all $((bytes >> 20)) MiB of $file once..."
    started=$(date +%s.%N)
    fio --name=prefill --filename="$file" --size="$bytes" --rw=write --bs=1m \
        --direct=1 --ioengine=io_uring --iodepth=8 --output-format=terse >/dev/null
    say "  done in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)") s"
}

# Runs a command with stdout to OUT and stderr to ERR, and prints
# "CPU_S WALL_S" (user plus system seconds, wall seconds).
timed() {
    local out="$1" err="$2" times
    shift 2
    times=$(mktemp)
    local TIMEFORMAT='%U %S %R'
    { time "$@" >"$out" 2>"$err"; } 2>"$times" || {
        rm -f "$times"
        say "$(basename "$0"): failed: $*"
        sed 's/^/    /' "$err" >&2
        return 1
    }
    awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$times"
    rm -f "$times"
}

# Machine and noise, for the record.
describe_machine() {
    local cpu
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    say "machine: $(nproc) CPUs ($cpu), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Removes the work directory DIR, or with BENCH_KEEP=1 only its target image
# (the reports stay for a look).
drop_work() {
    if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
        rm -f "$1/target.img"
        say "reports kept in $1"
    else
        rm -rf "$1"
    fi
}

#!/usr/bin/env bash
# Are the job files of examples/fio (and examples/*.fio) valid fio? Runs
# `fio --parse-only` on each and, for those cheap to run, a short real run
# in a temporary directory (files of a few MiB, psync, no O_DIRECT), so each
# file is known to mean to fio what iosteer reads in it.
#
#   scripts/fio-check.sh [FILE...]      (default: examples/fio/*.fio examples/*.fio)
#
# Needs fio; it does not install it. On Debian or Ubuntu:
#   sudo apt-get install -y fio
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
need_fio fio-check
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(examples/fio/*.fio examples/*.fio)
fi
# variables.fio takes its size from the environment.
export FIO_SIZE=${FIO_SIZE:-32m}
# Real runs only for the small files written for this check: the other
# examples size their jobs for a real drive (or need io_uring and O_DIRECT).
runnable() { [[ $1 == examples/fio/* ]]; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
for file in "${files[@]}"; do
    if grep -q '^[[:space:]]*iosteer_' "$file"; then
        echo "skip        $file (uses iosteer's own options, not fio's)"
        continue
    fi
    if ! out=$(fio --parse-only "$file" 2>&1); then
        echo "FAIL parse  $file: $out"
        failed=1
        continue
    fi
    if runnable "$file"; then
        mkdir -p "$tmp/run"
        if out=$(cd "$tmp/run" && timeout 60 fio --output-format=terse "$OLDPWD/$file" 2>&1); then
            echo "ok   run    $file"
        else
            echo "FAIL run    $file: $out"
            failed=1
        fi
        rm -rf "$tmp/run"
    else
        echo "ok   parse  $file"
    fi
done
exit $failed

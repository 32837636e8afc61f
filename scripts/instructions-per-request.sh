#!/usr/bin/env bash
# Instructions per request of `iosteer bench sched` for one policy spec, counted
# by callgrind (deterministic, unlike wall time on a shared machine): the
# difference between a 200k- and a 100k-request run, over 100k.
# Usage: scripts/instructions-per-request.sh SPEC [BINARY]
set -euo pipefail
spec=$1
bin=${2:-target/release/iosteer}
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" bench sched \
    --repeat 1 --requests "$1" --policy "$spec" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
small=$(count 100000)
large=$(count 200000)
echo "$spec: $(( (large - small) / 100000 )) instructions per request"

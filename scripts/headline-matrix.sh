#!/usr/bin/env bash
# The headline scenario (fill-while-serving) under the default schedulers
# of `iosteer sim` (stock FIFO, the paper's two fixes, steer), on the consumer-sata drive as shipped (semi-preemptive GC,
# non-queued TRIM) and on three variants: non-preemptive GC, queued TRIM, and
# both. Prints each run's before-fill and during-fill read rows and the fill's
# write row.
#
#   scripts/headline-matrix.sh [extra iosteer sim options]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p iosteer
bin=target/release/iosteer
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" device show consumer-sata > "$dir/shipped.toml"
sed 's/^mode = "semi_preemptive"/mode = "blocking"/' "$dir/shipped.toml" > "$dir/npgc.toml"
sed 's/^queued_trim = false/queued_trim = true/' "$dir/shipped.toml" > "$dir/queued-trim.toml"
sed 's/^queued_trim = false/queued_trim = true/' "$dir/npgc.toml" > "$dir/npgc-queued-trim.toml"
for drive in shipped npgc queued-trim npgc-queued-trim; do
    echo "== drive: consumer-sata, $drive"
    "$bin" sim --device "$dir/$drive.toml" "$@" 2>/dev/null \
        | grep -E '^scheduler|^  (before  read|fill    read|fill    write)'
done

#!/usr/bin/env bash
# `iosteer run --metrics` end to end: the quick scenario on the emulated
# consumer-sata drive under a bandwidth-limited netflix policy, /metrics
# fetched once the run has published three seconds in, the exposition checked
# by promtool (Prometheus' own parser and linter), then the run's exit status.
#
#   scripts/check-metrics.sh [PORT]    (default: a random port from 20000)
#
# Installs nothing: without promtool it names the package and fails. Fetches
# with curl, or python3 when curl is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-$((20000 + RANDOM % 20000))}"
if ! command -v promtool >/dev/null; then
  echo "check-metrics: promtool not found; on Debian/Ubuntu: apt-get install prometheus" >&2
  exit 2
fi
cargo build --release -q -p iosteer
bin=target/release/iosteer
if [ -n "${CARGO_TARGET_DIR:-}" ]; then bin="$CARGO_TARGET_DIR/release/iosteer"; fi
url="http://127.0.0.1:$port/metrics"
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT

# fetch URL HEADERS BODY: the response's headers and body into two files.
fetch() {
  if command -v curl >/dev/null; then
    curl -sSf --max-time 5 -D "$2" -o "$3" "$1"
  else
    python3 - "$@" <<'EOF'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
    with open(sys.argv[2], "w") as headers:
        headers.write(f"HTTP/1.1 {r.status}\r\n")
        headers.writelines(f"{k}: {v}\r\n" for k, v in r.headers.items())
    with open(sys.argv[3], "wb") as body:
        body.write(r.read())
EOF
  fi
}

cmd=("$bin" run --emulate consumer-sata --scenario quick --duration 6s
  --sched 'netflix:write.limiter=bandwidth,write.current=10000' --metrics "127.0.0.1:$port")
echo "check-metrics: running ${cmd[*]}"
"${cmd[@]}" >"$dir/run.out" 2>"$dir/run.err" &
pid=$!

# Aging the emulated drive comes first and takes a while: poll until the run
# has published metrics from its third second on (or give up after a minute).
for _ in $(seq 120); do
  sleep 0.5
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "check-metrics: the run ended before /metrics showed 3 s of it:" >&2
    cat "$dir/run.err" >&2
    exit 1
  fi
  fetch "$url" "$dir/headers" "$dir/metrics" 2>/dev/null || continue
  elapsed=$(awk '$1 == "iosteer_run_elapsed_seconds" { print $2 }' "$dir/metrics")
  if [ -n "$elapsed" ] && awk -v e="$elapsed" 'BEGIN { exit !(e >= 3) }'; then
    break
  fi
  elapsed=
done
if [ -z "${elapsed:-}" ]; then
  echo "check-metrics: no metrics from 3 s into the run at $url after a minute" >&2
  exit 1
fi
echo "check-metrics: fetched $url at ${elapsed} s into the run:" \
  "$(grep -c '^# TYPE' "$dir/metrics") metrics, $(grep -vc '^#' "$dir/metrics") samples"
if ! grep -qi '^content-type: text/plain; version=0.0.4' "$dir/headers"; then
  echo "check-metrics: wrong content type:" >&2
  cat "$dir/headers" >&2
  exit 1
fi
echo "check-metrics: promtool check metrics"
promtool check metrics <"$dir/metrics"
status=0
wait "$pid" || status=$?
pid=
if [ "$status" -ne 0 ]; then
  echo "check-metrics: the run failed (exit $status):" >&2
  cat "$dir/run.err" >&2
  exit 1
fi
echo "check-metrics: OK (promtool found no problem; the run finished cleanly)"

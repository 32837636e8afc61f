#!/usr/bin/env bash
# Does report.html load in a real browser, small and fast? Renders the
# report of `iosteer sim quick --out DIR` in headless Chromium (network cut
# off), and checks that the page logs no console message, that every chart
# is in the DOM the browser built, that the page names nothing to fetch, that
# it is under 2 MB and that it opens in under a second (the median of LOADS
# loads, each timed by the browser's navigation timing from the start of
# navigation to the load event, on a copy of the page with a timing script
# added: the page itself has none); saves a screenshot.
#
#   scripts/report-browser-test.sh
#   REPORT_ARGS=sim EXPECTED_SVGS=17 SCREENSHOT=docs/report.png scripts/report-browser-test.sh
#                   (the default scenario's report, as in README.md)
#
# Environment:
#   IOSTEER         the binary [default: built with cargo, release]
#   REPORT_ARGS     what to run [default: "sim quick"]
#   EXPECTED_SVGS   charts the page must hold [default: 17: five compared
#                   charts (read p99, read and write MB/s, free blocks, GC
#                   pages moved) and three per scheduler for the four
#                   default schedulers]
#   SCREENSHOT      where the screenshot goes [default: docs/report-quick.png]
#   LOADS           timed loads [default: 5]
#   LOAD_BUDGET_MS  the most the median load may take [default: 1000]
#
# Chromium missing: installed with apt-get when root, otherwise the test
# prints SKIPPED and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
args=${REPORT_ARGS:-sim quick}
expected=${EXPECTED_SVGS:-17}
loads=${LOADS:-5}
budget_ms=${LOAD_BUDGET_MS:-1000}
max_bytes=$((2 * 1000 * 1000))
screenshot=${SCREENSHOT:-docs/report-quick.png}

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "report-browser-test: installing chromium..."
        apt-get install -y -q chromium >/dev/null ||
            { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
        browser=$(command -v chromium)
    else
        echo "report-browser-test: SKIPPED: no chromium, and not root to install it (apt-get install -y chromium)"
        exit 0
    fi
fi

if [[ -z ${IOSTEER:-} ]]; then
    cargo build --release -q -p iosteer
    IOSTEER="${CARGO_TARGET_DIR:-$root/target}/release/iosteer"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # REPORT_ARGS is words
"$IOSTEER" $args --out "$work/out" >/dev/null 2>"$work/iosteer.err"
page="$work/out/report.html"
fail() {
    echo "report-browser-test: FAILED: $*" >&2
    exit 1
}
[[ -s $page ]] || fail "no report.html in $work/out"
bytes=$(wc -c <"$page")
echo "report-browser-test: $args: report.html is $bytes bytes"
((bytes < max_bytes)) || fail "report.html is $bytes bytes, over $max_bytes"

# Nothing to fetch: the page must stand alone.
if grep -Eq 'https?://|<script|<link|<img|@import|url\(' "$page"; then
    fail "report.html names something outside itself: $(grep -Eo 'https?://[^"<> ]*|<script|<link|<img|@import|url\(' "$page" | head -3)"
fi

# The browser cannot resolve any host, so a page that needed the network
# would show it; the profile is a fresh one of our own.
chrome() {
    timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
        --user-data-dir="$work/profile" --host-resolver-rules='MAP * ~NOTFOUND' \
        --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$page" >"$work/dom.html" 2>"$work/browser.err" ||
    fail "chromium could not load the page: $(tail -3 "$work/browser.err")"
if grep -E ':CONSOLE[:(]' "$work/browser.err"; then
    fail "the page logged to the console"
fi
svgs=$(grep -o '<svg' "$work/dom.html" | wc -l)
[[ $svgs == "$expected" ]] || fail "$svgs charts in the DOM, expected $expected"
grep -q 'class="answers"' "$work/dom.html" || fail "no summary in the DOM"
echo "report-browser-test: no console messages, $svgs of $expected charts in the DOM"

# How long the page takes to open: the load event's start, from the start
# of navigation, as the browser's own navigation timing has it. A copy with
# one script that writes it into the DOM, which --dump-dom then shows.
timing='<script>addEventListener("load",function(){var n=performance.getEntriesByType("navigation")[0];document.documentElement.setAttribute("data-load-ms",(n.loadEventStart-n.startTime).toFixed(1))})</script>'
sed "s|</body>|$timing</body>|" "$page" >"$work/timed.html"
times=()
for _ in $(seq "$loads"); do
    ms=$(chrome --dump-dom "file://$work/timed.html" 2>/dev/null | grep -o 'data-load-ms="[0-9.]*"' | grep -o '[0-9.]*' || true)
    [[ -n $ms ]] || fail "no load timing from the browser"
    times+=("$ms")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "report-browser-test: opens in $median ms (median of $loads loads: ${times[*]} ms)"
awk -v m="$median" -v b="$budget_ms" 'BEGIN {exit !(m < b)}' ||
    fail "the median load took $median ms, over $budget_ms ms"

case $screenshot in
/*) ;;
*) screenshot="$root/$screenshot" ;;
esac
mkdir -p "$(dirname "$screenshot")"
chrome --hide-scrollbars --window-size=1200,3000 --screenshot="$screenshot" \
    "file://$page" 2>"$work/shot.err" >/dev/null || fail "no screenshot: $(tail -3 "$work/shot.err")"
[[ -s $screenshot ]] || fail "no screenshot written"
echo "report-browser-test: screenshot $screenshot"
echo "report-browser-test: PASSED"

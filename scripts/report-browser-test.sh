#!/usr/bin/env bash
# Does report.html load in a real browser? Renders the report of
# `iosteer sim quick --out DIR` in headless Chromium (network cut off), and
# checks that the page logs no console message, that every chart is in the
# DOM the browser built, and that the page names nothing to fetch; saves a
# screenshot.
#
#   scripts/report-browser-test.sh
#
# Environment:
#   IOSTEER         the binary [default: built with cargo, release]
#   REPORT_ARGS     what to run [default: "sim quick"]
#   EXPECTED_SVGS   charts the page must hold [default: 14: five compared
#                   charts (read p99, read and write MB/s, free blocks, GC
#                   pages moved) and three per scheduler for the three
#                   default schedulers]
#   SCREENSHOT      where the screenshot goes [default: docs/report-quick.png]
#
# Chromium missing: installed with apt-get when root, otherwise the test
# prints SKIPPED and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
args=${REPORT_ARGS:-sim quick}
expected=${EXPECTED_SVGS:-14}
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
echo "report-browser-test: $args: report.html is $(wc -c <"$page") bytes"

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

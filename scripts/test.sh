#!/usr/bin/env bash
# Installs what the tests need on a fresh machine and runs them (docs/development.md).
#
#   bash scripts/test.sh            the whole suite, browser and deployment tests included: what
#                                   .ci/run calls. Installs Debian's Chromium, its headless shell
#                                   and ChromeDriver (the browser tests) and nginx (the reverse-proxy
#                                   test) when missing.
#   bash scripts/test.sh fast       the tier to run on every change: every test not marked
#                                   browser, slow or serial, outside tests/deploy and the
#                                   end-to-end modules (test_e2e_*.py, not even collected).
#
# Extra arguments go to pytest. Tests run in parallel (pytest-xdist, COSTDASH_TEST_WORKERS
# workers); the whole suite then runs the tests marked serial alone, because they measure
# latency and would be measuring their neighbours otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

tier=all
if [ "${1:-}" = fast ]; then
    tier=fast
    shift
fi

# Debian's packages install in the background while pip installs (neither waits for the other).
apt_pid=
if [ "$tier" = all ]; then
    missing=()
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    # The browser tests drive the headless build (tests/support/browser.py: a third less CPU).
    command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
    if [ ${#missing[@]} -gt 0 ]; then
        ( apt-get update -qq
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ) &
        apt_pid=$!
    fi
fi

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# The install is skipped when the requirements are the ones already installed (a developer's
# second run); a fresh clone has no .venv and always installs.
wanted="$(cat requirements.txt requirements-test.txt pyproject.toml | sha256sum | cut -c1-64)"
stamp=.venv/.costdash-requirements
# --no-compile: byte-compiling every installed module (pyspark alone is 490 MB) took half of a
# warm-cache install (1 min 23 s against 50 s); Python compiles what the tests import on first use.
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-compile -r requirements-test.txt -e .
    echo "$wanted" > "$stamp"
fi
if [ -n "$apt_pid" ] && ! wait "$apt_pid"; then
    echo "scripts/test.sh: installing Debian's ${missing[*]} failed" >&2
    exit 1
fi

# ...and keeps what it compiled: with PYTHONDONTWRITEBYTECODE set (as in some shells and CI
# images) every worker, server and Celery process recompiled dash, costdash and the tests from
# source and re-rewrote the tests' asserts, every run (collecting the fast tier: 23 s, 11 s with
# the bytecode kept).
unset PYTHONDONTWRITEBYTECODE

mkdir -p test-output
workers="${COSTDASH_TEST_WORKERS:-4}"
pytest=(.venv/bin/python -m pytest)
# Each module (or test class) goes whole to one worker, so its module fixtures (a replayed image,
# a Spark session, a running server) are set up once; modules are handed out longest first, in
# the order tests/conftest.py gives them from tests/durations.json (xdist would otherwise sort
# them by their number of tests).
distribute=(-n "$workers" --dist loadscope --no-loadscope-reorder)

if [ "$tier" = fast ]; then
    exec "${pytest[@]}" "${distribute[@]}" -m "not browser and not slow and not serial" \
        --ignore=tests/deploy --ignore-glob='*/test_e2e_*.py' "$@"
fi

# Two runs, one verdict: the exit code is the worse of the two, and the last line adds them up.
status=0
"${pytest[@]}" "${distribute[@]}" -m "not serial" \
    --junitxml=test-output/parallel.xml "$@" || status=$?
serial_status=0
# The serial run collects only the modules that mark tests serial (tests/conftest.py refuses a
# serial test elsewhere): collecting all 2,000 tests again cost ~11 s of CPU for ~10 tests.
serial_modules=()
if [ $# -eq 0 ]; then
    mapfile -t serial_modules < <(grep -rl --include='test_*.py' 'mark\.serial' tests | sort)
fi
"${pytest[@]}" -m serial --junitxml=test-output/serial.xml "${serial_modules[@]}" "$@" \
    || serial_status=$?
# pytest's 5 is "no test collected": fine for one half when extra arguments select the other.
[ "$status" -eq 5 ] && status=0
[ "$serial_status" -eq 5 ] && serial_status=0
[ "$serial_status" -gt "$status" ] && status=$serial_status
.venv/bin/python scripts/junit_total.py test-output/parallel.xml test-output/serial.xml || true
exit "$status"

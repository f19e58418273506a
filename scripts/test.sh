#!/usr/bin/env bash
# Installs everything the whole test suite needs on a fresh machine (a Python venv with the
# pinned packages, Debian's Chromium and ChromeDriver for the browser tests, Debian's nginx for
# the reverse-proxy test) and runs it.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-test.txt -e .

mkdir -p test-output
exec .venv/bin/python -m pytest "$@"

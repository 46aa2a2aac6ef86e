#!/usr/bin/env bash
# Prepares a fresh machine for the test suites: npm packages, redis-server, redis-sentinel, tini (the image's
# PID 1, for the production start test), the Python SDK's venv and helm (built from the Go module
# proxy when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${TETHER_SKIP_NPM_CI:-0}" != "1" ]; then
  npm ci --no-audit --no-fund
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
missing=()
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  missing+=(redis-server redis-tools)
fi
# Sentinel topology tests (test/support/sentinel-topology.ts) start redis-sentinel processes.
if ! command -v redis-sentinel >/dev/null 2>&1; then missing+=(redis-sentinel); fi
if [ ! -x /usr/bin/tini ]; then missing+=(tini); fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi
# The Debian packages may start a system redis on 6379 and a sentinel on 26379; the tests never
# use them, they start their own servers and sentinels on free loopback ports.

# The Python SDK's venv for the front door's tests (.venv-sdk, pinned).
bash scripts/setup-python-sdk.sh

# The Helm chart gate's tools, built once here so the test run itself stays short.
bash scripts/test-helm.sh --install-only

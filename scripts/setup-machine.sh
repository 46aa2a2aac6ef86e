#!/usr/bin/env bash
# Prepares a fresh machine for the test suites: npm packages and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${TETHER_SKIP_NPM_CI:-0}" != "1" ]; then
  npm ci --no-audit --no-fund
fi

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "redis-server is missing: installing the Debian package"
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y redis-server redis-tools
fi
# The Debian package may start a system redis on 6379; the tests never use it, they start
# their own servers on free loopback ports.

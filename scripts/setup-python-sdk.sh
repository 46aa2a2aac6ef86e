#!/usr/bin/env bash
# Makes .venv-sdk: a Python venv holding the official Python SDK at the exact versions of
# test/python/requirements.txt and constraints.txt, for the front door's Python SDK tests. Run by
# setup-machine.sh; a venv already made from the same two files is kept (a stamp holds their hash).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-sdk
pins=(test/python/requirements.txt test/python/constraints.txt)
wanted="$(cat "${pins[@]}" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins-sha256" 2>/dev/null)" = "$wanted" ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
rm -rf "$venv"
# Debian ships venv (with its ensurepip) apart from python3 itself.
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  rm -rf "$venv"
  echo "installing Debian packages: python3-venv"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  -r test/python/requirements.txt -c test/python/constraints.txt
echo "$wanted" >"$venv/.pins-sha256"

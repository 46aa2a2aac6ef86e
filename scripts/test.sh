#!/usr/bin/env bash
# The one test command: sets up a fresh machine, then runs every suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-machine.sh
npx vitest run

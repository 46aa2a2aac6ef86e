#!/usr/bin/env bash
# Every gate in one command: the static gates, then the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/static-gates.sh
npm test

#!/usr/bin/env bash
# Fails when src/gen differs from what `buf generate` makes of proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf generate
if [ -n "$(git status --porcelain -- src/gen)" ]; then
  echo "src/gen is stale: run 'npm run generate' and commit the result" >&2
  git status --porcelain -- src/gen >&2
  exit 1
fi

#!/usr/bin/env bash
# Format check, lint, typecheck, buf lint and the codegen drift check. Needs node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npx prettier --check .
npx eslint .
npx tsc -p tsconfig.json --noEmit
npx buf lint
bash scripts/check-codegen.sh

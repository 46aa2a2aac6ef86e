#!/usr/bin/env bash
# Format check, lint (layer import rules included), typecheck, the source checks (import cycles,
# file size, Lua headers), buf lint, buf breaking against main and the codegen drift check.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npx prettier --check .
npx eslint .
npx tsc -p tsconfig.json --noEmit
npx tsx scripts/check-source.ts
npx buf lint
# The API must stay wire-compatible with what main has shipped (a no-op on main itself).
if git rev-parse --verify --quiet main >/dev/null; then
  npx buf breaking --against '.git#branch=main'
fi
bash scripts/check-codegen.sh

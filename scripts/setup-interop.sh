#!/usr/bin/env bash
# Installs the interop tests' foreign clients into .tmp/interop (gitignored): grpcurl and the Go
# protoc plugins from the Go module proxy, grpcio and grpcio-tools from PyPI into a venv, and the
# Go client module's dependencies. Idempotent: a second run only checks what is already there.
#
#   TETHER_INTEROP_DIR   where the tools live (default .tmp/interop)
#   prints KEY=VALUE lines on stdout (GRPCURL, PYTHON, GOBIN_DIR, GO); progress goes to stderr
#   `setup-interop.sh grpcurl` installs grpcurl only (the README examples' test) and prints GRPCURL
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${TETHER_INTEROP_DIR:-$PWD/.tmp/interop}"
BIN="$DIR/bin"
VENV="$DIR/venv"
export GOTOOLCHAIN=local
GO="$(command -v go || echo /usr/local/go/bin/go)"
PY="$(command -v python3 || command -v python)"

GRPCURL_PINNED=v1.9.3
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.2
GRPCIO_VERSION=1.85.1

mkdir -p "$BIN"
log() { echo "setup-interop: $*" >&2; }

go_install() {
  local name="$1"
  shift
  if [ -x "$BIN/$name" ]; then return; fi
  for module in "$@"; do
    log "go install $module"
    if GOBIN="$BIN" "$GO" install "$module" >&2; then return; fi
  done
  log "could not install $name"
  exit 1
}

go_install grpcurl "github.com/fullstorydev/grpcurl/cmd/grpcurl@latest" \
  "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_PINNED"
if [ "${1:-}" = grpcurl ]; then
  echo "GRPCURL=$BIN/grpcurl"
  exit 0
fi
go_install protoc-gen-go "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
go_install protoc-gen-go-grpc "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import grpc, grpc_tools' 2>/dev/null; then
  log "creating $VENV with grpcio and grpcio-tools $GRPCIO_VERSION"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "grpcio==$GRPCIO_VERSION" "grpcio-tools==$GRPCIO_VERSION" >&2
fi

# The Go client's module dependencies (pinned by its go.sum), so the test run needs no network.
(cd test/interop/go && "$GO" mod download >&2)

echo "GRPCURL=$BIN/grpcurl"
echo "PYTHON=$VENV/bin/python"
echo "GOBIN_DIR=$BIN"
echo "GO=$GO"

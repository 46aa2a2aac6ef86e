#!/usr/bin/env bash
# The Helm chart gate: lint, render with every values file, decode every manifest strictly into
# Kubernetes API types (test/helm), and check that bad values are refused. Installs helm from the
# Go module proxy when it is missing; later runs reuse the binary and Go's build cache.
#
#   --install-only      install helm and build the checker, then stop (scripts/setup-machine.sh)
#   HELM=/path/to/helm  use that binary instead
#   TETHER_TOOLS_DIR    where the helm binary is kept (default ~/.cache/tether-tools)
#   TETHER_HELM_ENV_DIR write each rendering's server environment there as <case>.env.json
#                       (test/e2e/helm.test.ts feeds them to the server's own config loader),
#                       and the rendering itself as <case>.rendered.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.16.4
# Render against the oldest Kubernetes the chart supports (Chart.yaml kubeVersion); a helm built
# with `go install` also lacks the linker flags that set its default, v1.20.0.
KUBE_VERSION=1.27.0
CHART=helm/tether
TOOLS_DIR="${TETHER_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tether-tools}"
export GOTOOLCHAIN=local
GO="$(command -v go || echo /usr/local/go/bin/go)"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

find_helm() {
  if [ -n "${HELM:-}" ]; then
    return
  fi
  if command -v helm >/dev/null 2>&1 && helm version --template '{{.Version}}' 2>/dev/null | grep -q '^v3'; then
    HELM="$(command -v helm)"
    return
  fi
  HELM="$TOOLS_DIR/helm-$HELM_VERSION/helm"
  if [ ! -x "$HELM" ]; then
    echo "helm is missing: building $HELM_VERSION with go install (a few minutes the first time)"
    mkdir -p "$TOOLS_DIR/helm-$HELM_VERSION"
    GOBIN="$TOOLS_DIR/helm-$HELM_VERSION" "$GO" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  fi
}

find_helm
echo "helm: $HELM ($("$HELM" version --template '{{.Version}}'))"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building the strict manifest checker (test/helm)"
(cd test/helm && "$GO" build -o "$work/helmcheck" .)
check="$work/helmcheck"
if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi

# --- the checker itself must catch what it is there to catch ---------------------------------
if "$check" -decode-only test/helm/testdata/misspelt-field.yaml >"$work/out" 2>&1; then
  fail "strict decoding accepted a misspelt field (testdata/misspelt-field.yaml)"
elif grep -q 'unknown field "terminationGracePeriodSecond"' "$work/out"; then
  pass "strict decoding refuses a misspelt field"
else
  fail "strict decoding failed for another reason: $(cat "$work/out")"
fi
if "$check" test/helm/testdata/writable-root.yaml >"$work/out" 2>&1; then
  fail "the invariant checks accepted a writable root filesystem (testdata/writable-root.yaml)"
elif grep -q 'readOnlyRootFilesystem must be true' "$work/out"; then
  pass "the invariant checks refuse a writable root filesystem"
else
  fail "the invariant checks failed for another reason: $(cat "$work/out")"
fi

# --- lint and render: the defaults and every ci/ values file ----------------------------------
# The kinds each values file must render, exactly.
declare -A kinds=(
  [default]=ConfigMap,Secret,Service,ServiceAccount,Deployment,PodDisruptionBudget
  [all-on-values]=ConfigMap,Secret,Service,ServiceAccount,Deployment,PodDisruptionBudget,HorizontalPodAutoscaler,ServiceMonitor,GrafanaDashboard
  [cluster-values]=ConfigMap,Service,ServiceAccount,Deployment,PodDisruptionBudget
  [existing-secret-values]=ConfigMap,Secret,Service,ServiceAccount,Deployment,PodDisruptionBudget
  [memory-values]=ConfigMap,Service,ServiceAccount,Deployment
  [sentinel-values]=ConfigMap,Secret,Service,ServiceAccount,Deployment,PodDisruptionBudget
)
cases=(default)
for f in "$CHART"/ci/*.yaml; do cases+=("$f"); done
for f in "${cases[@]}"; do
  name="$(basename "$f" .yaml)"
  args=()
  [ "$f" = default ] || args=(-f "$f")
  if [ -z "${kinds[$name]:-}" ]; then
    fail "$name: add its expected kinds to scripts/test-helm.sh"
    continue
  fi
  if "$HELM" lint --strict --kube-version "$KUBE_VERSION" "$CHART" "${args[@]}" >"$work/out" 2>&1 \
    && ! grep -q 'Fail:' "$work/out"; then
    pass "$name: helm lint --strict"
  else
    fail "$name: helm lint --strict"; cat "$work/out"
  fi
  if "$HELM" template tether "$CHART" --namespace agents --kube-version "$KUBE_VERSION" "${args[@]}" \
    >"$work/$name.rendered.yaml" 2>"$work/out"; then
    env_args=()
    if [ -n "${TETHER_HELM_ENV_DIR:-}" ]; then
      env_args=(-env-out "$TETHER_HELM_ENV_DIR/$name.env.json")
      cp "$work/$name.rendered.yaml" "$TETHER_HELM_ENV_DIR/$name.rendered.yaml"
    fi
    if "$check" -kinds "${kinds[$name]}" "${env_args[@]}" "$work/$name.rendered.yaml" >"$work/out" 2>&1; then
      pass "$name: rendered manifests decode strictly and keep the chart's invariants"
    else
      fail "$name: manifest check"; cat "$work/out"
    fi
  else
    fail "$name: helm template"; cat "$work/out"
  fi
done

# A startup probe that follows Redis renders fine but breaks an invariant the checker must catch.
if "$HELM" template tether "$CHART" --kube-version "$KUBE_VERSION" --set 'probes.startup.service=' \
  >"$work/startup-on-redis.yaml" 2>"$work/out" \
  && ! "$check" "$work/startup-on-redis.yaml" >"$work/out" 2>&1 \
  && grep -q 'startup probe must ask a process-health service' "$work/out"; then
  pass "the invariant checks refuse a startup probe that follows Redis"
else
  fail "a startup probe asking \"\" was not refused for that reason: $(cat "$work/out")"
fi

# A declared webhook endpoint whose secret variable is not set from a Secret must be caught.
if "$HELM" template tether "$CHART" --kube-version "$KUBE_VERSION" -f "$CHART/ci/all-on-values.yaml" \
  2>"$work/out" | sed '/- name: TETHER_WEBHOOK_SECRET_0$/,+4d' >"$work/webhook-secret-dropped.yaml" \
  && ! "$check" "$work/webhook-secret-dropped.yaml" >"$work/out" 2>&1 \
  && grep -q 'webhook endpoint ops: TETHER_WEBHOOK_SECRET_0 must be set from a secretKeyRef' "$work/out"; then
  pass "the invariant checks refuse a webhook endpoint whose secret is not from a Secret"
else
  fail "a webhook endpoint without its secret variable was not refused for that reason: $(cat "$work/out")"
fi

# --- bad values are refused, each for its own reason -------------------------------------------
for f in test/helm/bad-values/*.yaml; do
  name="$(basename "$f" .yaml)"
  expect="$(sed -n 's/^# expect: //p' "$f" | head -n 1)"
  if "$HELM" template tether "$CHART" --kube-version "$KUBE_VERSION" -f "$f" >/dev/null 2>"$work/out"; then
    fail "bad values accepted: $name"
  elif grep -qF -- "$expect" "$work/out"; then
    pass "bad values refused: $name"
  else
    fail "bad values $name refused, but not for \"$expect\": $(cat "$work/out")"
  fi
done

# --- the chart packages ------------------------------------------------------------------------
if "$HELM" package "$CHART" --destination "$work" >"$work/out" 2>&1; then
  pass "helm package"
else
  fail "helm package"; cat "$work/out"
fi

echo "helm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

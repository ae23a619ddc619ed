#!/usr/bin/env bash
# Prints the path of `promtool`, taken from Debian's `prometheus` package:
# downloaded once with apt-get and unpacked with dpkg-deb into a cache
# outside the work tree (no package installed, no service started).
#   bash tools/promtool.sh   # cache: ${PROMTOOL_CACHE:-$HOME/.cache/kubectl-fleet-promtool}
# tools/test.sh exports its result as PROMTOOL for tests/monitoring_rules.rs.
set -euo pipefail
cache="${PROMTOOL_CACHE:-${HOME:-/root}/.cache/kubectl-fleet-promtool}"
bin="$cache/root/usr/bin/promtool"
if [ ! -x "$bin" ]; then
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "promtool: '$tool' not found (needs a Debian-based machine)" >&2; exit 1; }
  done
  mkdir -p "$cache/debs"
  rm -f "$cache"/debs/prometheus_*.deb
  if ! (cd "$cache/debs" && apt-get download -q prometheus >&2); then
    echo "promtool: apt lists missing or stale; running apt-get update" >&2
    apt-get update -q >&2
    (cd "$cache/debs" && apt-get download -q prometheus >&2)
  fi
  rm -rf "$cache/root"
  dpkg-deb -x "$cache"/debs/prometheus_*.deb "$cache/root"
fi
"$bin" --version >/dev/null 2>&1 || { echo "promtool: $bin does not run" >&2; exit 1; }
echo "$bin"

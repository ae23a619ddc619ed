#!/usr/bin/env bash
# Stops what start.sh DIR started, by the PIDs it recorded, and removes the
# data dir and the keys:
#
#   tools/realapi/stop.sh DIR
#
# With REALAPI_STOP_REMOVES_DIR=1 (set by the test harness, which made DIR
# itself) the logs and DIR go too.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: stop.sh DIR" >&2; exit 2; }
dir="$1"
[ -d "$dir" ] || exit 0

stop() { # PIDFILE
  local pid
  [ -s "$1" ] || return 0
  pid="$(cat "$1")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

# The watcher is what may be running this script; never signal ourselves.
if [ -s "$dir/watcher.pid" ] && [ "$(cat "$dir/watcher.pid")" != "$PPID" ] && [ "$(cat "$dir/watcher.pid")" != "$$" ]; then
  stop "$dir/watcher.pid"
fi
rm -f "$dir/watcher.pid"
stop "$dir/apiserver.pid"
stop "$dir/etcd.pid"
rm -rf "$dir/data" "$dir/pki" "$dir/kubeconfig" "$dir/url"
if [ "${REALAPI_STOP_REMOVES_DIR:-}" = 1 ]; then
  rm -rf "$dir"
fi

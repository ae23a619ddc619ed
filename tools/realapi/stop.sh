#!/usr/bin/env bash
# Stops what start.sh DIR (or start-pair.sh DIR) started, by the PIDs it
# recorded, and removes the data dir and the keys:
#
#   tools/realapi/stop.sh DIR
#
# Every process gets SIGTERM at once, and SIGKILL if it still runs 5 s
# later. With REALAPI_STOP_NOW=1 (the test harness, whose data is thrown
# away) they get SIGKILL at once. With REALAPI_STOP_REMOVES_DIR=1 (set by
# the test harness, which made DIR itself) the logs and DIR go too.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: stop.sh DIR" >&2; exit 2; }
dir="$1"
[ -d "$dir" ] || exit 0

signal=TERM
[ "${REALAPI_STOP_NOW:-}" = 1 ] && signal=KILL
pids=()
# The watcher is what may be running this script; never signal ourselves.
if [ -s "$dir/watcher.pid" ] && [ "$(cat "$dir/watcher.pid")" != "$PPID" ] && [ "$(cat "$dir/watcher.pid")" != "$$" ]; then
  kill "$(cat "$dir/watcher.pid")" 2>/dev/null || true
fi
rm -f "$dir/watcher.pid"
for f in apiserver sandbox etcd; do
  [ -s "$dir/$f.pid" ] || continue
  pid="$(cat "$dir/$f.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -"$signal" "$pid" 2>/dev/null || true
    pids+=("$pid")
  fi
  rm -f "$dir/$f.pid"
done
for _ in $(seq 1 50); do
  alive=()
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && alive+=("$pid")
  done
  [ "${#alive[@]}" -eq 0 ] && break
  pids=("${alive[@]}")
  sleep 0.1
done
for pid in "${pids[@]}"; do
  kill -KILL "$pid" 2>/dev/null || true
done
rm -rf "$dir/data" "$dir/pki" "$dir/kubeconfig" "$dir/url" "$dir/port" "$dir/etcd-servers" \
  "$dir/delegate.kubeconfig" "$dir/loopback.kubeconfig" "$dir/sandbox-ca.crt"
if [ "${REALAPI_STOP_REMOVES_DIR:-}" = 1 ]; then
  rm -rf "$dir"
fi

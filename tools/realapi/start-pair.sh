#!/usr/bin/env bash
# Starts kube-sandbox in front of the real API server, as kube-apiserver
# runs its apiextensions-apiserver (docs/realapi.md, "kube-sandbox in
# front"): kube-sandbox serves the core, RBAC, auth, coordination, events and
# admissionregistration APIs and proxies apiextensions.k8s.io and every CRD
# group to the real server behind it, which trusts its front-proxy
# certificate, authorizes through it and runs Kubernetes' own
# ValidatingAdmissionPolicy plugin on the policies stored in it.
#
#   tools/realapi/start-pair.sh DIR       # stop: tools/realapi/stop.sh DIR
#
# Writes DIR/kubeconfig (kube-sandbox's admin, mode 0600: the one API server
# clients see), DIR/loopback.kubeconfig (the identity the real server acts
# with on kube-sandbox), DIR/sandbox.pid and what start.sh --behind writes, and
# returns once custom resource definitions are served through kube-sandbox.
#
# Environment: KUBE_SANDBOX_BIN (default target/debug/kube-sandbox of this
# work tree: cargo build -p kube-sandbox), and start.sh's REALAPI_BIN_DIR,
# REALAPI_ETCD_SERVERS, REALAPI_WATCH_PID (its watcher stops kube-sandbox
# too).
set -euo pipefail

die() { echo "realapi start-pair: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: start-pair.sh DIR"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sandbox="${KUBE_SANDBOX_BIN:-$here/../../target/debug/kube-sandbox}"
[ -x "$sandbox" ] || die "kube-sandbox not built at $sandbox: run cargo build -p kube-sandbox"
command -v curl >/dev/null || die "curl not found"
mkdir -p "$1"
dir="$(cd "$1" && pwd)"

stop_sandbox() {
  [ -s "$dir/sandbox.pid" ] || return 0
  kill "$(cat "$dir/sandbox.pid")" 2>/dev/null || true
  wait "$(cat "$dir/sandbox.pid")" 2>/dev/null || true
  rm -f "$dir/sandbox.pid"
}

started=0
for attempt in 1 2 3; do
  bash "$here/start.sh" --prepare-delegate "$dir"
  rm -f "$dir/kubeconfig"
  "$sandbox" serve --kubeconfig "$dir/kubeconfig" --crd-delegate "$dir/delegate.kubeconfig" \
    --loopback-kubeconfig "$dir/loopback.kubeconfig" >"$dir/sandbox.log" 2>&1 </dev/null &
  echo $! > "$dir/sandbox.pid"
  for _ in $(seq 1 100); do
    [ -s "$dir/kubeconfig" ] && break
    kill -0 "$(cat "$dir/sandbox.pid")" 2>/dev/null || break
    sleep 0.1
  done
  [ -s "$dir/kubeconfig" ] || { cat "$dir/sandbox.log" >&2; stop_sandbox; die "kube-sandbox did not start"; }
  rc=0
  bash "$here/start.sh" --behind "$dir/loopback.kubeconfig" "$dir" || rc=$?
  if [ "$rc" = 0 ]; then started=1; break; fi
  stop_sandbox
  [ "$rc" = 3 ] || exit "$rc"
  echo "realapi start-pair: the delegate's port was taken (attempt $attempt); again" >&2
done
[ "$started" = 1 ] || die "no free port for the real API server after 3 attempts"

# CRDs served through kube-sandbox: its admin token and CA from DIR/kubeconfig.
token=$(sed -n 's/^ *token: //p' "$dir/kubeconfig" | head -n1)
sed -n 's/^ *certificate-authority-data: //p' "$dir/kubeconfig" | head -n1 | base64 -d > "$dir/sandbox-ca.crt"
url=$(sed -n 's/^ *server: //p' "$dir/kubeconfig" | head -n1)
for _ in $(seq 1 100); do
  if curl -fsS --cacert "$dir/sandbox-ca.crt" -H "Authorization: Bearer $token" \
    "$url/apis/apiextensions.k8s.io/v1" 2>/dev/null | grep -q '"customresourcedefinitions"'; then
    echo "realapi start-pair: kube-sandbox on $url in front of $(cat "$dir/url") (kubeconfig $dir/kubeconfig)" >&2
    exit 0
  fi
  sleep 0.1
done
die "custom resource definitions not served through kube-sandbox, see $dir/*.log"

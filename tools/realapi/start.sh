#!/usr/bin/env bash
# Starts etcd and the real API server (built by build.sh) on free loopback
# ports, with a fresh data dir under DIR:
#
#   tools/realapi/start.sh DIR
#
# Writes DIR/kubeconfig (admin: client certificate with O=system:masters, CA
# embedded, mode 0600), DIR/url, DIR/etcd.pid, DIR/apiserver.pid and logs in
# DIR/*.log, and returns once /livez answers and CRD discovery is served.
#
# Environment:
#   REALAPI_BIN_DIR   folder with fleet-realapi-server and etcd
#                     (default ${REALAPI_CACHE:-$HOME/.cache/kubectl-fleet-realapi}/bin)
#   REALAPI_WATCH_PID when set, a watcher stops both processes (stop.sh DIR)
#                     as soon as that process is gone, so a test binary that
#                     panics, aborts or is killed never leaks servers
set -euo pipefail

die() { echo "realapi start: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: start.sh DIR"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="${REALAPI_BIN_DIR:-${REALAPI_CACHE:-${HOME:-/root}/.cache/kubectl-fleet-realapi}/bin}"
server="$bin_dir/fleet-realapi-server"
etcd="$bin_dir/etcd"
[ -x "$server" ] && [ -x "$etcd" ] \
  || die "real API server not built in $bin_dir: run tools/realapi/build.sh"
command -v openssl >/dev/null || die "openssl not found"
command -v curl >/dev/null || die "curl not found"

mkdir -p "$1"
dir="$(cd "$1" && pwd)"
for f in "$dir"/etcd.pid "$dir"/apiserver.pid; do
  if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    die "$f names a running process: run tools/realapi/stop.sh $dir first"
  fi
done
rm -rf "$dir/data" "$dir/pki"
mkdir -p "$dir/data" "$dir/pki"
chmod 0700 "$dir/pki"
umask 077

# A port nothing listens on now. Another process may still take it before we
# bind, so the caller retries the start when a bind fails.
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  die "no free loopback port found"
}

pki="$dir/pki"
# CA, serving certificate (127.0.0.1 and localhost) and the admin client
# certificate. O=system:masters is always authorized, so no RBAC is needed.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
  -subj "/CN=fleet-realapi-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null \
  || die "openssl: creating the CA failed"
issue() { # NAME SUBJECT EXTFILE-CONTENT
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
}
issue serving "/CN=fleet-realapi" \
  "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth
keyUsage=digitalSignature" || die "openssl: creating the serving certificate failed"
issue admin "/O=system:masters/CN=fleet-realapi-admin" \
  "extendedKeyUsage=clientAuth
keyUsage=digitalSignature" || die "openssl: creating the admin certificate failed"

b64() { base64 -w0 < "$1"; }

start_etcd() {
  etcd_port=$(free_port); peer_port=$(free_port)
  "$etcd" --name realapi --data-dir "$dir/data/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "realapi=http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync --log-level warn >"$dir/etcd.log" 2>&1 &
  echo $! > "$dir/etcd.pid"
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q '"health":"true"'; then
      return 0
    fi
    kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

write_kubeconfig() { # PATH PORT
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: realapi
  cluster:
    server: https://127.0.0.1:$2
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: realapi-admin
  user:
    client-certificate-data: $(b64 "$pki/admin.crt")
    client-key-data: $(b64 "$pki/admin.key")
contexts:
- name: realapi
  context:
    cluster: realapi
    user: realapi-admin
current-context: realapi
KC
}

curl_admin() {
  curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$@"
}

start_apiserver() {
  api_port=$(free_port)
  write_kubeconfig "$dir/kubeconfig" "$api_port"
  "$server" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --secure-port="$api_port" \
    --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key" \
    --cert-dir="$dir/data/certs" \
    --client-ca-file="$pki/ca.crt" \
    --authentication-kubeconfig="$dir/kubeconfig" --authentication-skip-lookup \
    --authorization-kubeconfig="$dir/kubeconfig" --kubeconfig="$dir/kubeconfig" \
    --enable-priority-and-fairness=false \
    --disable-admission-plugins=NamespaceLifecycle,MutatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook \
    >"$dir/apiserver.log" 2>&1 &
  echo $! > "$dir/apiserver.pid"
  # /readyz never turns ready here (its informers wait for core Services that
  # this server does not serve), so wait for /livez and CRD discovery.
  for _ in $(seq 1 300); do
    if curl_admin "https://127.0.0.1:$api_port/livez" >/dev/null 2>&1 \
      && curl_admin "https://127.0.0.1:$api_port/apis/apiextensions.k8s.io/v1" 2>/dev/null \
        | grep -q '"customresourcedefinitions"'; then
      return 0
    fi
    kill -0 "$(cat "$dir/apiserver.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

stop_pidfile() {
  [ -s "$1" ] || return 0
  kill "$(cat "$1")" 2>/dev/null || true
  wait "$(cat "$1")" 2>/dev/null || true
  rm -f "$1"
}

started=0
for attempt in 1 2 3; do
  if start_etcd; then started=1; break; fi
  stop_pidfile "$dir/etcd.pid"; rm -rf "$dir/data/etcd"
  echo "realapi start: etcd did not start (attempt $attempt), log:" >&2; tail -n 5 "$dir/etcd.log" >&2
done
[ "$started" = 1 ] || die "etcd did not become healthy, see $dir/etcd.log"

started=0
for attempt in 1 2 3; do
  if start_apiserver; then started=1; break; fi
  stop_pidfile "$dir/apiserver.pid"
  echo "realapi start: API server did not start (attempt $attempt), log:" >&2; tail -n 5 "$dir/apiserver.log" >&2
done
if [ "$started" != 1 ]; then
  stop_pidfile "$dir/etcd.pid"
  die "API server did not become live, see $dir/apiserver.log"
fi
echo "https://127.0.0.1:$api_port" > "$dir/url"

if [ -n "${REALAPI_WATCH_PID:-}" ]; then
  # Detached from our stdout/stderr so the caller's pipes close when we exit.
  nohup bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2/stop.sh" "$3"' \
    _ "$REALAPI_WATCH_PID" "$here" "$dir" >/dev/null 2>&1 </dev/null &
  echo $! > "$dir/watcher.pid"
fi
echo "realapi start: serving on https://127.0.0.1:$api_port (kubeconfig $dir/kubeconfig)" >&2

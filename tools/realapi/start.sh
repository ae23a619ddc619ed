#!/usr/bin/env bash
# Starts the real API server (built by build.sh) on loopback, with a fresh
# data dir under DIR. Three modes:
#
#   tools/realapi/start.sh DIR
#       Alone: etcd and the server, which serves CRDs and custom resources
#       only, to an admin client certificate (O=system:masters). Writes
#       DIR/kubeconfig (that admin; CA and certificate embedded, mode 0600),
#       DIR/url, DIR/etcd-servers, DIR/etcd.pid, DIR/apiserver.pid and logs
#       DIR/*.log, and returns once /livez answers and CRD discovery is
#       served.
#
#   tools/realapi/start.sh --check
#       Exits 0 when the server and etcd are built, else 1 saying what to run.
#
#   tools/realapi/start.sh --prepare-delegate DIR
#   tools/realapi/start.sh --behind HUB_KUBECONFIG DIR
#       Behind kube-sandbox, as the apiextensions-apiserver inside
#       kube-apiserver (docs/realapi.md). --prepare-delegate makes the
#       certificates (the server's CA and serving certificate, the front-proxy
#       CA and its client certificate, CN front-proxy-client), picks the port
#       and writes DIR/delegate.kubeconfig: what `kube-sandbox serve
#       --crd-delegate` takes. Start kube-sandbox with it, then --behind
#       starts etcd and the server on that port: it trusts only the front
#       proxy's certificate (X-Remote-User/-Uid/-Group/-Extra-*), asks
#       kube-sandbox (HUB_KUBECONFIG: a system:masters identity of it, its
#       loopback kubeconfig) to
#       authorize every request (SubjectAccessReview), and its admission
#       chain (NamespaceLifecycle, ValidatingAdmissionPolicy) reads
#       namespaces, policies and bindings from kube-sandbox. It exits 3 when
#       the prepared port was taken in between: prepare again (a new port),
#       restart kube-sandbox with the new DIR/delegate.kubeconfig, retry.
#       tools/realapi/start-pair.sh does all three steps.
#
# Environment:
#   REALAPI_BIN_DIR       folder with fleet-realapi-server and etcd
#                         (default: this work tree's build in
#                         ${REALAPI_CACHE:-$HOME/.cache/kubectl-fleet-realapi}/bin)
#   REALAPI_ETCD_SERVERS  --behind only: use this etcd (under a fresh
#                         prefix) instead of starting one
#   REALAPI_WATCH_PID     when set, a watcher stops what was started
#                         (stop.sh DIR) as soon as that process is gone, so
#                         a test binary that panics, aborts or is killed
#                         never leaks servers
set -euo pipefail

die() { echo "realapi start: error: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/realapi/lib.sh
. "$here/lib.sh"

mode=alone
hub_kubeconfig=
if [ "${1:-}" = --check ]; then
  server="$(realapi_server_bin "$here")"
  [ -x "$server" ] || die "the real API server is not built ($server missing): run tools/realapi/build.sh"
  [ -x "$(realapi_etcd_bin)" ] || die "etcd is not built: run tools/realapi/build.sh"
  exit 0
fi
case "${1:-}" in
  --prepare-delegate) mode=prepare; shift ;;
  --behind)
    mode=behind
    [ $# -ge 2 ] || die "usage: start.sh --behind HUB_KUBECONFIG DIR"
    [ -f "$2" ] && [ -r "$2" ] || die "$2 is not a readable kubeconfig"
    hub_kubeconfig="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
    shift 2
    ;;
esac
[ $# -eq 1 ] || die "usage: start.sh [--check | --prepare-delegate DIR | --behind HUB_KUBECONFIG DIR | DIR]"

server="$(realapi_server_bin "$here")"
etcd="$(realapi_etcd_bin)"
if [ "$mode" != prepare ]; then
  [ -x "$server" ] || die "real API server not built ($server missing): run tools/realapi/build.sh"
  [ -x "$etcd" ] || [ -n "${REALAPI_ETCD_SERVERS:-}" ] \
    || die "etcd not found at $etcd: run tools/realapi/build.sh"
fi
command -v openssl >/dev/null || die "openssl not found"
command -v curl >/dev/null || die "curl not found"

mkdir -p "$1"
dir="$(cd "$1" && pwd)"
pki="$dir/pki"
if [ "$mode" != prepare ]; then
  for f in "$dir"/etcd.pid "$dir"/apiserver.pid; do
    if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
      die "$f names a running process: run tools/realapi/stop.sh $dir first"
    fi
  done
fi
umask 077

# A port nothing listens on now, below Linux's ephemeral range (32768+) so
# no client connection holds it. Another process may still take it before
# the server binds: the caller then retries.
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 12000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  die "no free loopback port found"
}

new_ca() { # NAME CN
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=$2" -keyout "$pki/$1.key" -out "$pki/$1.crt" 2>/dev/null \
    || die "openssl: creating CA $2 failed"
}
issue() { # NAME SUBJECT CA EXTFILE-CONTENT
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null \
    || die "openssl: creating the key of $1 failed"
  printf '%s\n' "$4" > "$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$3.crt" -CAkey "$pki/$3.key" -CAcreateserial \
    -days 3650 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null \
    || die "openssl: creating certificate $1 failed"
}
serving_cert() {
  issue serving "/CN=fleet-realapi" ca "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth
keyUsage=digitalSignature"
}

b64() { base64 -w0 < "$1"; }

write_kubeconfig() { # PATH PORT CLIENT-CERT-NAME
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: realapi
  cluster:
    server: https://127.0.0.1:$2
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $(b64 "$pki/$3.crt")
    client-key-data: $(b64 "$pki/$3.key")
contexts:
- name: realapi
  context:
    cluster: realapi
    user: $3
current-context: realapi
KC
}

# --prepare-delegate: certificates, port, DIR/delegate.kubeconfig.
if [ "$mode" = prepare ]; then
  rm -rf "$pki"
  mkdir -p "$pki"
  new_ca ca fleet-realapi-ca
  serving_cert
  new_ca front-proxy-ca fleet-realapi-front-proxy-ca
  issue front-proxy-client "/CN=front-proxy-client" front-proxy-ca "extendedKeyUsage=clientAuth
keyUsage=digitalSignature"
  port=$(free_port)
  echo "$port" > "$dir/port"
  write_kubeconfig "$dir/delegate.kubeconfig" "$port" front-proxy-client
  echo "https://127.0.0.1:$port" > "$dir/url"
  exit 0
fi

if [ "$mode" = alone ]; then
  rm -rf "$pki"
  mkdir -p "$pki"
  new_ca ca fleet-realapi-ca
  serving_cert
  # O=system:masters is always authorized, so no RBAC is needed.
  issue admin "/O=system:masters/CN=fleet-realapi-admin" ca "extendedKeyUsage=clientAuth
keyUsage=digitalSignature"
else
  if [ ! -s "$dir/port" ] || [ ! -s "$pki/front-proxy-client.crt" ]; then
    die "$dir is not prepared: run start.sh --prepare-delegate $dir first"
  fi
fi
rm -rf "$dir/data"
mkdir -p "$dir/data"

# etcd's space quota is 8 GiB (its default is 2 GiB, and the size etcd's
# docs suggest as the most for a production cluster): the 100,000-site
# benchmark (tools/bench/hub_100k.py --api real) stores every site's writes
# until the API server compacts them, past 2 GiB.
start_etcd() {
  etcd_port=$(free_port); peer_port=$(free_port)
  "$etcd" --name realapi --data-dir "$dir/data/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "realapi=http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync --quota-backend-bytes=8589934592 \
    --log-level warn >"$dir/etcd.log" 2>&1 &
  echo $! > "$dir/etcd.pid"
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q '"health":"true"'; then
      echo "http://127.0.0.1:$etcd_port" > "$dir/etcd-servers"
      return 0
    fi
    kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Asks the server itself: as the admin (alone) or, behind kube-sandbox, as
# the front proxy speaking for a system:masters user.
curl_server() {
  if [ "$mode" = alone ]; then
    curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$@"
  else
    curl -fsS --cacert "$pki/ca.crt" --cert "$pki/front-proxy-client.crt" \
      --key "$pki/front-proxy-client.key" -H "X-Remote-User: system:apiserver" \
      -H "X-Remote-Group: system:masters" "$@"
  fi
}

# shellcheck disable=SC2054 # commas separate the values of one flag
start_apiserver() {
  local flags=()
  if [ "$mode" = alone ]; then
    api_port=$(free_port)
    write_kubeconfig "$dir/kubeconfig" "$api_port" admin
    flags=(
      --etcd-servers="$(cat "$dir/etcd-servers")"
      --client-ca-file="$pki/ca.crt"
      --authentication-kubeconfig="$dir/kubeconfig" --authentication-skip-lookup
      --authorization-kubeconfig="$dir/kubeconfig" --kubeconfig="$dir/kubeconfig"
      --disable-admission-plugins=NamespaceLifecycle,MutatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook
    )
  else
    api_port=$(cat "$dir/port")
    flags=(
      --etcd-servers="$etcd_servers" --etcd-prefix="$etcd_prefix"
      # Authentication: the front proxy's certificate and its headers only
      # (no --authentication-kubeconfig: no TokenReview, no lookup).
      --requestheader-client-ca-file="$pki/front-proxy-ca.crt"
      --requestheader-allowed-names=front-proxy-client
      --requestheader-username-headers=X-Remote-User
      --requestheader-uid-headers=X-Remote-Uid
      --requestheader-group-headers=X-Remote-Group
      --requestheader-extra-headers-prefix=X-Remote-Extra-
      --authentication-skip-lookup
      # Authorization: kube-sandbox's RBAC by SubjectAccessReview, never
      # cached, as kube-apiserver's in-process authorizer is not.
      --authorization-kubeconfig="$hub_kubeconfig"
      --authorization-webhook-cache-authorized-ttl=0
      --authorization-webhook-cache-unauthorized-ttl=0
      # Core API (namespaces, policies, bindings for admission): kube-sandbox.
      --kubeconfig="$hub_kubeconfig"
      # kube-sandbox serves no webhook configurations or mutating policies.
      --enable-admission-plugins=NamespaceLifecycle,ValidatingAdmissionPolicy
      --disable-admission-plugins=MutatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionWebhook
    )
  fi
  "$server" \
    --bind-address=127.0.0.1 --secure-port="$api_port" \
    --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key" \
    --cert-dir="$dir/data/certs" \
    --enable-priority-and-fairness=false \
    "${flags[@]}" >"$dir/apiserver.log" 2>&1 &
  echo $! > "$dir/apiserver.pid"
  # /readyz never turns ready alone (its informers wait for core Services
  # that it does not serve), so wait for /livez and CRD discovery.
  for _ in $(seq 1 300); do
    if curl_server "https://127.0.0.1:$api_port/livez" >/dev/null 2>&1 \
      && curl_server "https://127.0.0.1:$api_port/apis/apiextensions.k8s.io/v1" 2>/dev/null \
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

if [ "$mode" = behind ] && [ -n "${REALAPI_ETCD_SERVERS:-}" ]; then
  etcd_servers="$REALAPI_ETCD_SERVERS"
  echo "$etcd_servers" > "$dir/etcd-servers"
else
  started=0
  for attempt in 1 2 3; do
    if start_etcd; then started=1; break; fi
    stop_pidfile "$dir/etcd.pid"; rm -rf "$dir/data/etcd"
    echo "realapi start: etcd did not start (attempt $attempt), log:" >&2; tail -n 5 "$dir/etcd.log" >&2
  done
  [ "$started" = 1 ] || die "etcd did not become healthy, see $dir/etcd.log"
  etcd_servers="$(cat "$dir/etcd-servers")"
fi
# A prefix of its own, so servers sharing one etcd never see each other.
etcd_prefix="/fleet-realapi/$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"

started=0
# Whatever fails from here leaves nothing running.
trap '[ "$started" = 1 ] || { stop_pidfile "$dir/watcher.pid"; stop_pidfile "$dir/apiserver.pid"; stop_pidfile "$dir/etcd.pid"; }' EXIT
if [ -n "${REALAPI_WATCH_PID:-}" ]; then
  # Detached from our stdout/stderr so the caller's pipes close when we
  # exit; started first, so a caller killed while we start leaks nothing.
  nohup bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2/stop.sh" "$3"' \
    _ "$REALAPI_WATCH_PID" "$here" "$dir" >/dev/null 2>&1 </dev/null &
  echo $! > "$dir/watcher.pid"
fi

attempts=3
[ "$mode" = behind ] && attempts=1
for attempt in $(seq 1 "$attempts"); do
  if start_apiserver; then started=1; break; fi
  stop_pidfile "$dir/apiserver.pid"
  echo "realapi start: API server did not start (attempt $attempt), log:" >&2; tail -n 5 "$dir/apiserver.log" >&2
done
if [ "$started" != 1 ]; then
  if [ "$mode" = behind ] && grep -q "address already in use" "$dir/apiserver.log"; then
    echo "realapi start: port $api_port was taken: prepare again" >&2
    exit 3
  fi
  die "API server did not become live, see $dir/apiserver.log"
fi
echo "https://127.0.0.1:$api_port" > "$dir/url"
echo "realapi start: serving on https://127.0.0.1:$api_port ($mode; ${hub_kubeconfig:-kubeconfig $dir/kubeconfig})" >&2

#!/usr/bin/env bash
# kubectl-fleet demo, no cluster needed: `tools/demo.sh`
#
# Builds the binaries, then starts on loopback:
#   - a hub kube-sandbox and one member kube-sandbox per site,
#   - `kubectl fleet install --apply`, then `kubectl fleet register -f` of an
#     inventory file of 9 Push sites (run twice: the second run changes
#     nothing) and `kubectl fleet register --pull` for 2 Pull sites,
#   - a hub fleet-operator and one edge fleet-operator per running site, each
#     edge authenticating with only the token `register` minted for it.
# Then it shows `kubectl fleet status` and `kubectl fleet incidents` as the
# fleet changes:
#   - staging-eu, prod-us and prod-eu crash-loop the same way: a cross-cluster
#     correlation, whose sites have nodes on an older kernel than the others
#     (`In common:`); checkout fails first in staging-eu, then in prod-us: a cascade;
#   - prod-eu's edge is killed: Stale after 3 intervals, Unreachable after 10;
#   - prod-ap's clock is 10 minutes behind: still Connected (ClockSkew noted);
#   - four stores in eu-north-1: store-4 is cordoned for a planned upgrade
#     (`kubectl fleet cordon`), then all four lose their uplink: one grouped
#     outage of store-1..3 in `kubectl fleet incidents`, store-4 shown in
#     maintenance and left out of it;
#   - night-1 and night-2 (us-east-2) declare an offline window around now
#     (`kubectl fleet schedule`): silent inside it night-1 is Sleeping, not
#     Stale, and pages nobody; night-2's window ends a minute or two later
#     and it stays silent: LateToWake;
#   - factory-7's edge loses the hub (its uplink is down) but keeps running
#     and journals what it sees on its member: a node goes NotReady, the
#     edge restarts; back online it explains the dark period, shown by
#     `kubectl fleet describe factory-7`;
#   - staging-eu, prod-us and prod-eu share a label (node-image) no other
#     site has: the correlation names it (`kubectl fleet incidents ID`);
#   - dr-west is registered but its edge never starts: Pending;
#   - lab-pull and factory-pull are Pull sites: nothing runs on them, the hub
#     probes them through the kubeconfig Secret `register --pull` stored;
#     lab-pull is Connected, factory-pull's token was revoked on the member
#     (Stale, reason Unauthorized, in `status -o wide` and `describe`)
#     until `kubectl fleet register factory-pull --pull` runs
#     again and the running hub picks up the new Secret.
# The heartbeat interval is 10 s (the minimum), so it takes about 3 minutes.
# DEMO_FAST=1 scales every interval by 0.3 (about 2 minutes: the schedule
# scene waits for a window that ends on a whole minute).
# DEMO_REALAPI=1 runs the hub on the real-API lane: kube-sandbox in front of
# the real Kubernetes API server of tools/realapi, which stores the fleet
# and admits every write with the shipped policy (docs/realapi.md).
# It ends by itself or on Ctrl-C, and stops every process it started by PID.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

echo "==> building kubectl-fleet, fleet-operator and kube-sandbox"
cargo build --quiet --bin kubectl-fleet --bin fleet-operator
cargo build --quiet -p kube-sandbox --bin kube-sandbox
BIN=$ROOT/target/debug

WORK=$(mktemp -d "${TMPDIR:-/tmp}/fleet-demo.XXXXXX")
mkdir -p "$WORK/logs"
PIDS=()

cleanup() {
  trap - EXIT INT TERM
  # Ctrl-C while piped (`demo.sh | tee log`) ends the reader too: a write
  # to it must not kill the cleanup before the work dir (every site's
  # token) is gone, so nothing here depends on stdout.
  trap '' PIPE
  set +e
  say() { echo "$@" 2>/dev/null; }
  say
  say "==> stopping ${#PIDS[@]} processes"
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ "${DEMO_REALAPI:-}" == 1 ]]; then bash tools/realapi/stop.sh "$WORK/realapi" || true; fi
  if [[ "${DEMO_KEEP:-}" == 1 ]]; then
    say "    logs kept in $WORK/logs"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SCALE=1
if [[ "${DEMO_FAST:-}" == 1 ]]; then SCALE=0.3; fi
INTERVAL=10

export KUBECACHEDIR=$WORK/kube-cache
export NO_COLOR=1
# `kubectl fleet ...` finds the plugin on PATH, as after `krew install fleet`.
export PATH=$BIN:$PATH
HUB=$WORK/hub.kubeconfig

start_sandbox() { # NAME
  local kc=$WORK/$1.kubeconfig
  "$BIN/kube-sandbox" serve --kubeconfig "$kc" 2>"$WORK/logs/sandbox-$1.log" &
  PIDS+=($!)
  for _ in $(seq 100); do [[ -s "$kc" ]] && return 0; sleep 0.1; done
  echo "kube-sandbox $1 did not start:" >&2
  cat "$WORK/logs/sandbox-$1.log" >&2
  exit 1
}

hubctl() { KUBECONFIG=$HUB kubectl "$@"; }
memberctl() { local m=$1; shift; kubectl --kubeconfig "$WORK/member-$m.kubeconfig" "$@"; }

seed_node() { # MEMBER NODE GPU-RESOURCE COUNT [KERNEL]
  local gpus="" labels="" kernel=${5:-6.8.0-45-generic}
  if [[ -n "$3" ]]; then gpus="\"$3\": \"$4\","; fi
  case $3 in
    nvidia.com/gpu) labels='"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"' ;;
    amd.com/gpu) labels='"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"' ;;
  esac
  memberctl "$1" apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$2", "labels": {$labels}},
 "status": {"capacity": {$gpus "cpu": "32", "memory": "128Gi"},
            "allocatable": {$gpus "cpu": "31", "memory": "120Gi"},
            "nodeInfo": {"osImage": "Ubuntu 24.04.1 LTS", "kernelVersion": "$kernel",
                         "containerRuntimeVersion": "containerd://1.7.22", "kubeletVersion": "v1.33.1",
                         "operatingSystem": "linux", "architecture": "amd64", "machineID": "",
                         "systemUUID": "", "bootID": "", "kubeProxyVersion": ""},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
EOF
}

seed_failing_pod() { # MEMBER NAMESPACE DEPLOYMENT WAITING-REASON
  local m=$1 ns=$2 deploy=$3 reason=$4 message
  case $reason in
    ImagePullBackOff) message="Back-off pulling image \\\"registry.example/$deploy:2.4.1\\\"" ;;
    *) message="back-off 5m0s restarting failed container=app pod=$deploy-5d8f9-q2x7k" ;;
  esac
  memberctl "$m" create namespace "$ns" >/dev/null 2>&1 || true
  memberctl "$m" apply -f - >/dev/null <<EOF
{"apiVersion": "apps/v1", "kind": "ReplicaSet",
 "metadata": {"name": "$deploy-5d8f9", "namespace": "$ns",
              "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "$deploy",
                                   "uid": "6f1c1a52-0000-4000-8000-000000000001", "controller": true}]},
 "spec": {"selector": {"matchLabels": {"app": "$deploy"}},
          "template": {"metadata": {"labels": {"app": "$deploy"}},
                       "spec": {"containers": [{"name": "app", "image": "registry.example/$deploy:2.4.1"}]}}}}
EOF
  memberctl "$m" apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$deploy-5d8f9-q2x7k", "namespace": "$ns", "labels": {"app": "$deploy"},
              "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "$deploy-5d8f9",
                                   "uid": "6f1c1a52-0000-4000-8000-000000000002", "controller": true}]},
 "spec": {"containers": [{"name": "app", "image": "registry.example/$deploy:2.4.1"}]}}
EOF
  memberctl "$m" -n "$ns" patch pod "$deploy-5d8f9-q2x7k" --subresource=status --type=merge -p "{
    \"status\": {\"phase\": \"Running\", \"containerStatuses\": [{\"name\": \"app\",
      \"image\": \"registry.example/$deploy:2.4.1\", \"imageID\": \"\", \"ready\": false, \"restartCount\": 6,
      \"state\": {\"waiting\": {\"reason\": \"$reason\", \"message\": \"$message\"}}}]}}" >/dev/null
}

start_edge() { # SITE [extra flags...]
  local site=$1; shift
  "$BIN/fleet-operator" --federation-role edge --site "$site" \
    --kubeconfig "$WORK/member-$site.kubeconfig" --hub-kubeconfig "$WORK/creds/$site.kubeconfig" \
    --health-addr 127.0.0.1:0 --secure-addr 127.0.0.1:0 --interval-scale "$SCALE" "$@" 2>"$WORK/logs/edge-$site.log" &
  local pid=$!
  PIDS+=($pid)
  EDGE_PID=$pid
}

show() { # TITLE
  echo
  echo "==> [$(date -u +%H:%M:%S)] $1"
  echo "\$ kubectl fleet status"
  hubctl fleet status || true
}

echo "==> starting the hub and 14 member clusters (kube-sandbox) in $WORK"
if [[ "${DEMO_REALAPI:-}" == 1 ]]; then
  echo "    the hub: kube-sandbox in front of the real Kubernetes API server (tools/realapi)"
  bash tools/realapi/build.sh 2>"$WORK/logs/realapi-build.log"
  KUBE_SANDBOX_BIN="$BIN/kube-sandbox" REALAPI_WATCH_PID=$$ \
    bash tools/realapi/start-pair.sh "$WORK/realapi" 2>"$WORK/logs/realapi-start.log"
  cp "$WORK/realapi/kubeconfig" "$HUB"
else
  start_sandbox hub
fi
STORES=(store-1 store-2 store-3 store-4)
NIGHT=(night-1 night-2)
SITES=(staging-eu prod-us prod-eu prod-ap dr-west lab-pull factory-pull factory-7 "${STORES[@]}" "${NIGHT[@]}")
for s in "${SITES[@]}"; do start_sandbox "member-$s"; done

echo "==> kubectl fleet install --apply"
hubctl fleet install --apply >/dev/null 2>"$WORK/logs/install.log"

echo "==> registering the Push sites from one inventory file: kubectl fleet register -f"
inventory_site() { # SITE ENV TIER REGION [NODE-IMAGE]
  local labels=""
  if [[ -n "${5:-}" ]]; then labels=$'\n  labels:\n    node-image: '"$5"; fi
  cat <<EOF
---
apiVersion: federation.kubectl-fleet.dev/v1alpha1
kind: FederatedCluster
metadata:
  name: $1$labels
spec:
  environment: $2
  tier: $3
  region: $4
  heartbeatIntervalSeconds: $INTERVAL
EOF
}
{
  inventory_site staging-eu staging standard eu-west-1 ubuntu-2404-k7
  inventory_site prod-us production critical us-east-1 ubuntu-2404-k7
  inventory_site prod-eu production standard eu-central-1 ubuntu-2404-k7
  inventory_site prod-ap production standard ap-south-1
  inventory_site dr-west dr non-critical us-west-2
  inventory_site factory-7 production standard eu-central-1
  for s in "${STORES[@]}"; do inventory_site "$s" production standard eu-north-1; done
  for s in "${NIGHT[@]}"; do inventory_site "$s" production standard us-east-2; done
} >"$WORK/inventory.yaml"
echo "\$ kubectl fleet register -f inventory.yaml --output-dir creds/"
hubctl fleet register -f "$WORK/inventory.yaml" --output-dir "$WORK/creds" 2>"$WORK/logs/register-f.log" | sed 's/^/    /'
echo "\$ kubectl fleet register -f inventory.yaml --output-dir creds/   # again: nothing to do"
hubctl fleet register -f "$WORK/inventory.yaml" --output-dir "$WORK/creds" 2>>"$WORK/logs/register-f.log" | tail -n 1 | sed 's/^/    /'
register_pull() { # SITE ENV TIER REGION
  hubctl fleet register "$1" --pull --member-kubeconfig "$WORK/member-$1.kubeconfig" \
    --environment "$2" --tier "$3" --region "$4" --heartbeat-interval "$INTERVAL" \
    2>"$WORK/logs/register-$1.log"
  tail -n 1 "$WORK/logs/register-$1.log" | sed "s/^/    $1: /"
}
register_pull lab-pull development non-critical eu-west-1
register_pull factory-pull production standard eu-central-1
echo "==> revoking factory-pull's read-only token on its member (its ServiceAccount is deleted)"
memberctl factory-pull -n fleet-system delete serviceaccount fleet-pull-factory-pull >/dev/null

echo "==> seeding member clusters: GPU nodes and failing workloads"
# The three sites that will crash-loop alike run an older kernel than the
# rest: what their correlation names in common.
seed_node staging-eu stg-node-1 nvidia.com/gpu 2 5.15.0-105-generic
seed_node prod-us us-gpu-1 nvidia.com/gpu 8 5.15.0-105-generic
seed_node prod-us us-gpu-2 nvidia.com/gpu 8
seed_node prod-eu eu-node-1 amd.com/gpu 4 5.15.0-105-generic
seed_node prod-ap ap-node-1 habana.ai/gaudi 8
seed_node dr-west dr-node-1 "" 0
seed_node lab-pull lab-node-1 nvidia.com/gpu 4
seed_node factory-pull plc-node-1 "" 0
seed_node factory-7 factory-7-n1 "" 0
seed_failing_pod staging-eu shop checkout CrashLoopBackOff
seed_failing_pod prod-eu payments ledger CrashLoopBackOff
seed_failing_pod prod-ap search indexer ImagePullBackOff

echo "==> starting the hub operator"
# The Pull members are sandboxes on this machine's loopback, which the hub
# refuses unless allowed.
"$BIN/fleet-operator" --kubeconfig "$HUB" --health-addr 127.0.0.1:0 --secure-addr 127.0.0.1:0 --lease-duration 6s \
  --pull-allow-cidr 127.0.0.0/8 --interval-scale "$SCALE" 2>"$WORK/logs/hub.log" &
PIDS+=($!)

echo "==> starting edges: staging-eu first (checkout starts failing there)"
start_edge staging-eu
sleep 3
show "staging-eu reports; the rest are still Pending"

# checkout now fails in production too, after staging: a cascade.
seed_failing_pod prod-us shop checkout CrashLoopBackOff
echo
echo "==> starting edges: prod-us, prod-eu, prod-ap with its clock 10 minutes behind, and store-1..4"
start_edge prod-us
start_edge prod-eu
PROD_EU=$EDGE_PID
start_edge prod-ap --clock-offset=-10m
STORE_PIDS=()
for s in "${STORES[@]}"; do start_edge "$s"; STORE_PIDS+=("$EDGE_PID"); done
NIGHT_PIDS=()
for s in "${NIGHT[@]}"; do start_edge "$s"; NIGHT_PIDS+=("$EDGE_PID"); done
# factory-7's edge keeps its dark-period journal in a ConfigMap on its member
# (`kubectl fleet install --role edge` creates it; made by hand here).
memberctl factory-7 create namespace fleet-system >/dev/null 2>&1 || true
memberctl factory-7 -n fleet-system create configmap fleet-edge-journal >/dev/null
JOURNAL=(--journal-configmap fleet-system/fleet-edge-journal)
start_edge factory-7 "${JOURNAL[@]}"
FACTORY=$EDGE_PID
step=$(awk "BEGIN {print $INTERVAL * $SCALE}")
sleep "$(awk "BEGIN {print $step + 3}")"
show "four edges Connected (prod-ap despite its clock); dr-west never started: Pending"
echo
echo "\$ kubectl fleet status -o wide   # REASON: why a site is not Connected"
hubctl fleet status -o wide || true
echo
echo "\$ kubectl fleet describe factory-pull"
hubctl fleet describe factory-pull || true
echo
echo "\$ kubectl fleet incidents"
hubctl fleet incidents || true
XC=$(hubctl get federationstatus fleet -o jsonpath='{.status.correlations[0].id}' 2>/dev/null || true)
if [[ -n "$XC" ]]; then
  echo
  echo "\$ kubectl fleet incidents $XC   # In common: what its sites share that the others do not"
  hubctl fleet incidents "$XC" || true
fi
echo
echo "\$ kubectl get fc   # the CRD's printer columns"
hubctl get fc
echo
echo "\$ kubectl get fc prod-ap -o jsonpath='{.status.conditions[?(@.type==\"ClockSkew\")].message}'"
hubctl get fc prod-ap -o jsonpath='{.status.conditions[?(@.type=="ClockSkew")].message}'
echo

echo
# Windows are set to the minute, in the site's time zone: night-1's covers
# the next half hour, night-2's ends one to two minutes from now.
in_minutes() { date -u -d "$1 min" +%H:%M; }
echo "\$ kubectl fleet schedule night-1 --offline $(in_minutes -1)-$(in_minutes 30) --tz UTC"
hubctl fleet schedule night-1 --offline "$(in_minutes -1)-$(in_minutes 30)" --tz UTC 2>&1 | sed 's/^/    /' || true
NIGHT2_END=$(in_minutes 2)
echo "\$ kubectl fleet schedule night-2 --offline $(in_minutes -1)-$NIGHT2_END --tz UTC"
hubctl fleet schedule night-2 --offline "$(in_minutes -1)-$NIGHT2_END" --tz UTC 2>&1 | sed 's/^/    /' || true
echo
echo "\$ kubectl fleet cordon store-4 --for 2h --reason 'planned POS upgrade'"
hubctl fleet cordon store-4 --for 2h --reason 'planned POS upgrade' || true
echo
echo "==> killing prod-eu's edge (pid $PROD_EU) and the edges of store-1..4 (the eu-north-1 uplink is down)"
kill -KILL "$PROD_EU" "${STORE_PIDS[@]}"
for pid in "$PROD_EU" "${STORE_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
killed=$(date +%s)
echo "==> night-1 and night-2 go quiet for the night; factory-7 loses its uplink (its edge keeps running)"
kill -KILL "${NIGHT_PIDS[@]}" "$FACTORY"
for pid in "${NIGHT_PIDS[@]}" "$FACTORY"; do wait "$pid" 2>/dev/null || true; done
# The same site token, but the hub's address is unreachable from the site.
DARK_KC=$WORK/creds/factory-7.dark.kubeconfig
sed -E 's#server: .*#server: https://127.0.0.1:9#' "$WORK/creds/factory-7.kubeconfig" >"$DARK_KC"
chmod 600 "$DARK_KC"
start_dark_factory() {
  "$BIN/fleet-operator" --federation-role edge --site factory-7 \
    --kubeconfig "$WORK/member-factory-7.kubeconfig" --hub-kubeconfig "$DARK_KC" "${JOURNAL[@]}" \
    --health-addr 127.0.0.1:0 --secure-addr 127.0.0.1:0 --interval-scale "$SCALE" 2>>"$WORK/logs/edge-factory-7.log" &
  FACTORY=$!
  PIDS+=($FACTORY)
}
start_dark_factory

wait_phase() { # SITE PHASE TIMEOUT-SECONDS
  local deadline=$(( $(date +%s) + $3 ))
  while (( $(date +%s) < deadline )); do
    if [[ "$(hubctl get fc "$1" -o jsonpath='{.status.phase}')" == "$2" ]]; then return 0; fi
    sleep 1
  done
  echo "    $1 did not become $2 in $3 s" >&2
  return 1
}

stale_after=$(awk "BEGIN {printf \"%d\", 3 * $step + 15}")
wait_phase prod-eu Stale "$stale_after"
wait_phase store-3 Stale 30
show "prod-eu and the stores Stale $(( $(date +%s) - killed )) s after their edges died (3 intervals after the last heartbeat); store-4 in maintenance"
wait_outage() { # TIMEOUT-SECONDS
  local deadline=$(( $(date +%s) + $1 ))
  while (( $(date +%s) < deadline )); do
    [[ -n "$(hubctl get federationstatus fleet -o jsonpath='{.status.outages[*].id}' 2>/dev/null)" ]] && return 0
    sleep 1
  done
  echo "    no grouped outage in $1 s" >&2
  return 1
}
echo "\$ kubectl get fc night-1 night-2 -o custom-columns=NAME:.metadata.name,PHASE:.status.phase"
hubctl get fc night-1 night-2 -o custom-columns=NAME:.metadata.name,PHASE:.status.phase || true
echo "==> on factory-7's member, while it is dark: node factory-7-n1 loses power, the edge restarts"
memberctl factory-7 patch node factory-7-n1 --subresource=status --type=merge -p '{"status": {"conditions": [
  {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
   "message": "Kubelet stopped posting node status (power)",
   "lastTransitionTime": "'"$(date -u +%Y-%m-%dT%H:%M:%SZ)"'"}]}}' >/dev/null
wait_journal() { # KIND TIMEOUT-SECONDS: until factory-7's journal on its member holds an entry of KIND
  local deadline=$(( $(date +%s) + $2 ))
  while (( $(date +%s) < deadline )); do
    memberctl factory-7 -n fleet-system get configmap fleet-edge-journal -o jsonpath='{.data.journal}' 2>/dev/null \
      | grep -q "\"$1\"" && return 0
    sleep 1
  done
  echo "    factory-7's journal has no $1 entry after $2 s" >&2
  return 1
}
wait_journal NodeNotReady 40 || true
kill -TERM "$FACTORY"; wait "$FACTORY" 2>/dev/null || true
start_dark_factory
wait_journal EdgeRestarted 40 || true
wait_outage "$(awk "BEGIN {printf \"%d\", $step + 15}")" || true
echo
echo "\$ kubectl fleet incidents   # one grouped outage for the three stores, not three pages"
hubctl fleet incidents || true
OUTAGE=$(hubctl get federationstatus fleet -o jsonpath='{.status.outages[0].id}' 2>/dev/null || true)
if [[ -n "$OUTAGE" ]]; then
  echo
  echo "\$ kubectl fleet status --incident $OUTAGE"
  hubctl fleet status --incident "$OUTAGE" || true
fi
echo
echo "\$ kubectl get events -A --field-selector reason=GroupedOutage"
hubctl get events -A --field-selector reason=GroupedOutage || true

echo
echo "==> fixing factory-pull: kubectl fleet register factory-pull --pull … (the hub keeps running)"
register_pull factory-pull production standard eu-central-1
wait_phase factory-pull Connected "$(awk "BEGIN {printf \"%d\", 2 * $step + 15}")"
echo "\$ kubectl get fc factory-pull -o jsonpath='{.status.conditions[?(@.type==\"Connected\")].reason}'"
hubctl get fc factory-pull -o jsonpath='{.status.conditions[?(@.type=="Connected")].reason}'
echo

echo
echo "==> factory-7's uplink is back: its edge reports what it saw while dark"
kill -TERM "$FACTORY"; wait "$FACTORY" 2>/dev/null || true
start_edge factory-7 "${JOURNAL[@]}"
wait_dark_period() { # SITE TIMEOUT-SECONDS
  local deadline=$(( $(date +%s) + $2 ))
  while (( $(date +%s) < deadline )); do
    [[ -n "$(hubctl get fc "$1" -o jsonpath='{.status.lastDarkPeriod.to}' 2>/dev/null)" ]] && return 0
    sleep 1
  done
  echo "    $1 reported no dark period in $2 s" >&2
  return 1
}
wait_dark_period factory-7 "$(awk "BEGIN {printf \"%d\", 2 * $step + 15}")" || true
echo "\$ kubectl fleet describe factory-7"
hubctl fleet describe factory-7 || true

unreachable_after=$(awk "BEGIN {printf \"%d\", 10 * $step + 15}")
wait_phase prod-eu Unreachable "$unreachable_after"
show "prod-eu Unreachable $(( $(date +%s) - killed )) s after its edge died (10 intervals)"
echo
echo "\$ kubectl fleet incidents"
hubctl fleet incidents || true
echo
# night-2's window ends on a whole minute; LateToWake 3 intervals after.
late_by=$(( $(date -u -d "$NIGHT2_END" +%s) + 60 ))
(( late_by < $(date +%s) )) && late_by=$(date +%s)
wait_late() { # SITE TIMEOUT-SECONDS
  local deadline=$(( $(date +%s) + $2 ))
  while (( $(date +%s) < deadline )); do
    [[ "$(hubctl get fc "$1" -o jsonpath='{.status.conditions[?(@.type=="Connected")].reason}')" == LateToWake ]] && return 0
    sleep 1
  done
  echo "    $1 was not LateToWake in $2 s" >&2
  return 1
}
echo "==> waiting for night-2's window to end (until $NIGHT2_END UTC and 3 intervals)"
wait_late night-2 $(( late_by - $(date +%s) + 3 * ${step%.*} + 30 )) || true
show "night-1 Sleeping (pages nobody); night-2 silent past its window: LateToWake"
echo
echo "\$ kubectl fleet status night-2 -o wide"
hubctl fleet status night-2 -o wide || true
echo
echo "==> hub operator log (transitions only):"
grep -E "phase transition" "$WORK/logs/hub.log" | sed -E 's/^.*hub: //' | head -40
echo
echo "==> demo finished"

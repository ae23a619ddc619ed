#!/usr/bin/env python3
"""Issue 35's "Object count" axis: one hub over 100,000 sites, in release
builds, on kube-sandbox or on the real API server (docs/benchmarks-100k.md):

    python3 tools/bench/hub_100k.py                         # 100,000 sites, every phase
    python3 tools/bench/hub_100k.py --api real --phases hub,steady,stale,restart,status
    python3 tools/bench/hub_100k.py --sites 50000 --write-section docs/benchmarks-100k.md
    python3 tools/bench/hub_100k.py --phases status         # one axis alone
    python3 tools/bench/hub_100k.py --smoke                 # 2,000 sites: does it still work?

Starts a release `kube-sandbox serve` (loopback) or, with --api real, etcd
and the real apiextensions-apiserver of tools/realapi alone (loopback, CRDs
and custom resources only: no namespaces, events or coordination leases, so
the hub's Events are refused and the failover phase cannot run; build it
with tools/realapi/build.sh), applies deploy/crds with kubectl, and preloads N sites as production would hold them: each site
server-side applied as `kubectl fleet register` applies it (field manager
kubectl-fleet; the labels of fleet::rbac::site_object_labels, the bucket
label among them), given an edge's full status report (one JSON merge patch
of /status: versions, nodeCount, capacity, nodeInfo, member, inference, a
signal on a few percent of sites), and its FederatedClusterLease created as
register creates it (server-side apply, empty spec) and renewed once as the
edge renews it (k8s::site_lease::renew_site_lease: a merge patch of
spec.renewTime and lastRenewDurationMilliseconds that clears managedFields).
Preloading is concurrent HTTP/1.1 requests with keep-alive from a few
forked processes of a few threads each (no bulk loader: every object goes
through the API as any client's would).

Then a load generator renews every lease at its site's interval, each
site at its own phase (N/I renewals per second), and the phases run, each
optional (--phases):

  hub       `fleet-operator --federation-role=hub --leader-elect=false`
            started over the preloaded fleet, whose sites were never judged:
            process start to the hub's liveness record (FederationStatus
            `fleet`, status.hub.lastJudgementTime: "judged every site",
            docs/operations.md#is-a-hub-judging), and to every site having
            a phase (a watch of the sites, here); VmHWM at that point (the
            first sync's peak RSS).
  steady    hub CPU (utime+stime from /proc) over --steady-seconds of
            renewals, per renewal; VmRSS over the window; the hub's own
            counters (fleet_hub_heartbeats_total, the watch lag histogram)
            read from its /metrics.
  stale     the last --silenced sites (whose spec.heartbeatIntervalSeconds
            is --silence-interval, while the rest are at --interval) stop
            renewing: from each one's last renewal to the hub's Stale as
            the watch sees it (goal 3*I + 5 s).
  restart   kube-sandbox told to restart (SIGUSR1: 5 s down, every
            connection dropped and refused, then no watch resumes from
            before it: 410 Gone, as from a restarted API server's new watch
            caches) or, with --api real, the real API server killed
            (SIGKILL, as a crash: a SIGTERM waits up to 60 s for open
            watches to end) and started again 5 s later with the same
            flags over the same etcd (its watch caches built anew): the
            restart to the hub's first liveness record judging
            after the outage, the hub's RSS and VmHWM through its re-list
            (both watches, sites and leases, list again), the status
            writes and reconciles it made for it, and the sites that were
            wrongly written Stale or Unreachable in the 60 s after.
  failover  two replicas with leader election (a Lease in fleet-system,
            --lease-duration): the first's start to its first liveness
            record (a restart over a judged fleet; without the hub phase
            it first judges the never-judged fleet, every phase written),
            then SIGKILL of the leader right after one of its records,
            once the standby stands by and has listed the sites (its RSS
            steady), to the standby's first liveness record as leader.
  status    the load generator and the hubs stopped: `kubectl-fleet
            status` (table), `status -o json`, and, as a user would read
            the list otherwise, curl (one GET of the whole list; and pages
            of 500 following `continue`), `kubectl get fc -o json` and
            `kubectl get fc` (both page by 500): wall, CPU and peak RSS
            (GNU time's %M), median of --repeat after one warm-up.

Every figure is printed as a BENCH-RESULT line and in a Markdown table;
--write-section FILE replaces the "## Results" section of FILE. Bounded:
--time-limit (default 3600 s) ends the run with whatever was measured,
and every exit path (an error, Ctrl-C, SIGTERM, the limit) stops every
process this harness started, by its PID; each is also started with
PR_SET_PDEATHSIG, so none outlives a harness killed with SIGKILL. Loopback
only. Python 3 standard library only (and kubectl, curl, GNU time).
Nothing here asserts a figure.
"""

import argparse
import base64
import ctypes
import datetime
import hashlib
import heapq
import http.client
import json
import multiprocessing
import os
import platform
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse
from benchlib import (TimeLimit, bounded, kubeconfig_field, private_file, realapi_built, realapi_start, realapi_stop,
                      rfc3339, signal_obj, unbounded)

ROOT = Path(__file__).resolve().parents[2]
GROUP = "federation.kubectl-fleet.dev"
API = f"{GROUP}/v1alpha1"
SITES = f"/apis/{API}/federatedclusters"
LEASES = f"/apis/{API}/federatedclusterleases"
FLEET = f"/apis/{API}/federationstatuses/fleet"
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"
SECTION = "## Results"
PREFIX = "BENCH-RESULT "
MIB = 1024 * 1024
TIME = "/usr/bin/time"
# How long kube-sandbox stays down when told to restart (SIGUSR1;
# RESTART_DOWN in kube-sandbox/src/main.rs), and the real API server
# between its stop and its start again (--api real).
SANDBOX_RESTART_DOWN = 5
PHASES = ["hub", "steady", "stale", "restart", "failover", "status"]
# The hubs' --status-write-qps and --status-write-burst (the operator's
# defaults unless the harness is told otherwise; hub_argv passes them).
STATUS_WRITES = {"qps": 200, "burst": 2000}

TIERS = ["critical", "standard", "non-critical"]
ENVS = ["production", "staging", "development", "dr"]
REGIONS = ["eu-west-1", "us-east-1", "ap-south-1", "us-west-2", "eu-central-1", "ap-northeast-1"]


STOP = threading.Event()  # the run must end: every thread stops at once


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_time(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


# --- processes -------------------------------------------------------------------

# Resolved once here, so the forked child only makes the call.
_prctl = ctypes.CDLL(None, use_errno=True).prctl
_SIGKILL = int(signal.SIGKILL)


def _die_with_parent():
    # PR_SET_PDEATHSIG: SIGKILL this child when the harness dies, however.
    _prctl(1, _SIGKILL, 0, 0, 0)


class Procs:
    """Every process this harness starts, stopped by PID on every exit path."""

    def __init__(self):
        self.running = {}

    def start(self, name, argv, log_path, env=None):
        out = open(log_path, "wb")
        p = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env, preexec_fn=_die_with_parent)
        out.close()
        p.log_path = log_path
        p.started_wall = time.time()
        p.started = time.monotonic()
        self.running[p.pid] = (name, p)
        log(f"started {name} (pid {p.pid})")
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=30):
        """Stops p by its PID (SIGTERM, then SIGKILL after `timeout`);
        returns seconds it took to exit."""
        if p.pid not in self.running:
            return 0.0
        t = time.monotonic()
        if p.poll() is None:
            try:
                os.kill(p.pid, sig)
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
            except ProcessLookupError:
                pass
        self.running.pop(p.pid, None)
        return time.monotonic() - t

    def stop_all(self):
        for _, (name, p) in list(self.running.items()):
            self.stop(p, timeout=10)
            log(f"stopped {name} (pid {p.pid})")


def proc_cpu(pid):
    """utime + stime of a running process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_mem(pid):
    """(VmRSS, VmHWM) in bytes."""
    rss = hwm = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
    return rss, hwm


def self_cpu():
    r = os.times()
    return r.user + r.system


# --- the API server ----------------------------------------------------------------

class Api:
    """The API server's address and the admin credentials, for this process,
    curl and the forked preloaders."""

    def __init__(self, kubeconfig, workdir):
        self.kubeconfig = kubeconfig
        text = kubeconfig.read_text()
        self.server = kubeconfig_field(text, "server")
        url = urlparse(self.server)
        self.host, self.port = url.hostname, url.port
        if self.host not in ("127.0.0.1", "localhost", "::1"):
            raise RuntimeError(f"the API server is not on loopback: {self.server}")
        self.ca = base64.b64decode(kubeconfig_field(text, "certificate-authority-data")).decode()
        self.ca_file = workdir / "ca.pem"
        self.ca_file.write_text(self.ca)
        token = kubeconfig_field(text, "token")
        self.headers = {"Accept": "application/json"}
        if token:
            header_file = workdir / "auth.header"  # curl reads it: the token is never in argv
            private_file(header_file, f"Authorization: Bearer {token}\n".encode())
            self.curl_auth = ["-H", f"@{header_file}"]
            self.headers["Authorization"] = f"Bearer {token}"
            self.cert = None
        else:
            cert, key = workdir / "client.crt", workdir / "client.key"
            private_file(cert, base64.b64decode(kubeconfig_field(text, "client-certificate-data")))
            private_file(key, base64.b64decode(kubeconfig_field(text, "client-key-data")))
            self.curl_auth = ["--cert", str(cert), "--key", str(key)]
            self.cert = (cert, key)

    def connection(self, timeout=120):
        ctx = ssl.create_default_context(cadata=self.ca)
        if self.cert:
            ctx.load_cert_chain(*self.cert)
        return http.client.HTTPSConnection(self.host, self.port, context=ctx, timeout=timeout)

    def request(self, conn, method, path, body=None, content_type=None):
        headers = dict(self.headers)
        if content_type:
            headers["Content-Type"] = content_type
        if isinstance(body, (dict, list)):
            body = json.dumps(body, separators=(",", ":"))
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:400]!r}")
        return data

    def get_json(self, path, conn=None):
        own = conn is None
        conn = conn or self.connection()
        try:
            return json.loads(self.request(conn, "GET", path))
        finally:
            if own:
                conn.close()

    def curl(self, *extra):
        return ["curl", "-sS", "--fail", "--cacert", str(self.ca_file), *self.curl_auth, *extra]


# --- the fleet as production holds it ----------------------------------------------------

def site_name(i, width):
    return f"site-{i:0{width}d}"


def bucket(name):
    """fleet::bucket::bucket_label_value: the first byte of the name's SHA-256."""
    return str(hashlib.sha256(name.encode()).digest()[0])


def site_apply(name, i, interval):
    """The site as `kubectl fleet register` server-side applies it."""
    region, env, tier = REGIONS[i % len(REGIONS)], ENVS[i % 4], TIERS[i % 3]
    return {
        "apiVersion": API, "kind": "FederatedCluster",
        "metadata": {"name": name, "labels": {
            "app.kubernetes.io/managed-by": "kubectl-fleet",
            f"{GROUP}/site": name,
            f"{GROUP}/environment": env,
            f"{GROUP}/tier": tier,
            f"{GROUP}/bucket": bucket(name),
            f"{GROUP}/region": region,
        }},
        "spec": {
            "mode": "Push", "region": region, "environment": env, "tier": tier,
            "capabilities": ["monitoring"], "heartbeatIntervalSeconds": interval,
            "maxConcurrentRemediations": 3,
        },
    }


def edge_report(i, now):
    """An edge's full report (every edge-owned key), as its first patch
    after it starts sends it (operator::collect::edge_status), last changed
    an hour ago: one site in 25 has a crash loop, one in 100 a node down."""
    nodes = 3 + i % 5
    gpus = 8 if i % 2 == 0 else 0
    signals = []
    if i % 100 == 0:
        signals.append(signal_obj("NodeNotReady", "critical", "", "Node", f"node-{i % 3}", None,
                                  now - 4000, now - 3600, 3))
    if i % 25 == 0:
        signals.append(signal_obj("CrashLoopBackOff", "high", "inference", "Deployment", "llm-server",
                                  "back-off 5m0s restarting failed container llm-server", now - 4200,
                                  now - 3600, 7))
    status = {
        "lastHeartbeatTime": rfc3339(now - 3600),
        "observedVersion": "0.1.0",
        "kubernetesVersion": "v1.33.2",
        "nodeCount": nodes,
        "namespaceCount": 12 + i % 9,
        "capacity": {"nodes": nodes, "gpusTotal": gpus, "gpusAllocatable": gpus - (i % 3 if gpus else 0)},
        "inference": {"models": 1, "servicesReady": 2, "servicesFailed": 0, "servicesTotal": 2},
        "signals": signals,
        "credentialExpirationTime": rfc3339(now + 90 * 86400),
        "credentialRenewalTime": rfc3339(now + 45 * 86400),
        "lastReportDurationMilliseconds": 50,
        "member": f"{i:08x}-5a1e-4c3b-9d2f-{(i * 7919) % 16**12:012x}",
        "nodeInfo": {
            "osImage": {"values": [{"value": "Ubuntu 24.04.1 LTS", "nodes": nodes}]},
            "kernelVersion": {"values": [{"value": "6.8.0-45-generic", "nodes": nodes - 1},
                                         {"value": "5.15.0-105-generic", "nodes": 1}]},
            "containerRuntimeVersion": {"values": [{"value": "containerd://1.7.22", "nodes": nodes}]},
        },
    }
    if gpus:
        status["capacity"]["gpusByVendor"] = {"nvidia.com/gpu": {"total": gpus, "allocatable": gpus - i % 3}}
        status["nodeInfo"]["gpuModel"] = {"values": [{"value": "NVIDIA-A100-SXM4-80GB", "nodes": 2}]}
    return {"status": status}


def lease_apply(name):
    """The lease as `kubectl fleet register` creates it: an empty spec."""
    return {"apiVersion": API, "kind": "FederatedClusterLease", "metadata": {"name": name}, "spec": {}}


def renewal(t, ms):
    """The edge's renewal (k8s::site_lease::renew_site_lease)."""
    return {"metadata": {"managedFields": [{}]},
            "spec": {"renewTime": rfc3339(t), "lastRenewDurationMilliseconds": ms}}


class Fleet:
    """Which sites there are and at what interval: the last `silenced`
    sites at `silence_interval`, the others at `interval`."""

    def __init__(self, n, silenced, interval, silence_interval):
        self.n, self.silenced = n, silenced
        self.interval, self.silence_interval = interval, silence_interval
        self.width = max(5, len(str(n - 1)))
        self.names = [site_name(i, self.width) for i in range(n)]

    def interval_of(self, i):
        return self.silence_interval if i >= self.n - self.silenced else self.interval

    def is_silenced(self, i):
        return i >= self.n - self.silenced


# --- preload: forked processes of threads, each with keep-alive connections ----------------

def _preload_worker(api, fleet, indices, threads, counter):
    """In a forked process: preloads sites `indices` on `threads` threads."""
    errors = []
    lock = threading.Lock()
    it = iter(indices)

    def loop():
        conn = api.connection()
        try:
            while not errors:
                with lock:
                    i = next(it, None)
                if i is None:
                    return
                name = fleet.names[i]
                now = time.time()
                path = f"{SITES}/{name}"
                api.request(conn, "PATCH", path + "?fieldManager=kubectl-fleet&force=true",
                            site_apply(name, i, fleet.interval_of(i)), APPLY)
                api.request(conn, "PATCH", path + "/status", edge_report(i, now), MERGE)
                lpath = f"{LEASES}/{name}"
                api.request(conn, "PATCH", lpath + "?fieldManager=kubectl-fleet&force=true",
                            lease_apply(name), APPLY)
                api.request(conn, "PATCH", lpath, renewal(now, 20 + i % 60), MERGE)
                with counter.get_lock():
                    counter.value += 1
        except Exception as e:  # surfaced through the exit code
            errors.append(e)
        finally:
            conn.close()

    ths = [threading.Thread(target=loop, daemon=True) for _ in range(threads)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    if errors:
        print(f"preload worker: {errors[0]}", file=sys.stderr, flush=True)
        os._exit(1)
    os._exit(0)


def preload(api, fleet, procs_n, threads):
    """Every site, in order (the silenced ones last, so their renewal is
    fresh when the load generator takes over); returns seconds taken."""
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("q", 0)
    t = time.monotonic()
    # Each worker takes every procs_n-th site in ascending order, so the
    # silenced tail is preloaded last.
    chunks = [list(range(k, fleet.n, procs_n)) for k in range(procs_n)]
    workers = [ctx.Process(target=_preload_worker, args=(api, fleet, chunk, threads, counter), daemon=True)
               for chunk in chunks]
    for w in workers:
        w.start()
    last = time.monotonic()
    try:
        while any(w.is_alive() for w in workers):
            for w in workers:
                w.join(0.5)
                if w.exitcode not in (None, 0):
                    raise RuntimeError("a preload worker failed (its error is above)")
            if time.monotonic() - last > 15:
                done = counter.value
                el = time.monotonic() - t
                log(f"preload: {done:,} of {fleet.n:,} sites in {el:.0f} s ({done * 4 / el:,.0f} requests/s)")
                last = time.monotonic()
            if STOP.is_set():
                raise TimeLimit("stopped during preload")
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
                w.join()
    if counter.value != fleet.n:
        raise RuntimeError(f"preload: {counter.value} of {fleet.n} sites")
    return time.monotonic() - t


# --- the load generator: every lease renewed at its site's interval -------------------------

class Renewer:
    """Renews each site's lease every interval of its own, at a phase spread
    evenly over the interval, on `threads` threads (site i on thread
    i % threads), each with a keep-alive connection. Silencing stops the
    silenced sites' renewals; `last[i]` is when site i's last renewal was
    answered (wall clock)."""

    def __init__(self, api, fleet, threads):
        self.api, self.fleet, self.threads_n = api, fleet, threads
        self.sent = [0] * threads
        self.late = [0.0] * threads  # the most a renewal was sent behind its schedule
        self.late_count = [0] * threads  # renewals sent more than 1 s behind
        self.last = [0.0] * fleet.n
        self.silenced = threading.Event()
        self.stop = threading.Event()
        self.errors = []
        self.threads = []

    def start(self):
        self.t0 = time.monotonic()
        self.t0_wall = time.time()
        for k in range(self.threads_n):
            th = threading.Thread(target=self._loop, args=(k,), daemon=True)
            th.start()
            self.threads.append(th)

    def _loop(self, k):
        f = self.fleet
        heap = []
        live_n = f.n - f.silenced
        for i in range(k, f.n, self.threads_n):
            if f.is_silenced(i):
                offset = (i - live_n) / max(1, f.silenced) * f.silence_interval
            else:
                offset = i / max(1, live_n) * f.interval
            heap.append((self.t0 + offset, i))
        heapq.heapify(heap)
        conn = self.api.connection(timeout=60)
        try:
            while heap and not self.stop.is_set() and not STOP.is_set():
                due, i = heap[0]
                now = time.monotonic()
                if due > now:
                    self.stop.wait(min(due - now, 0.5))
                    continue
                heapq.heapreplace(heap, (due + f.interval_of(i), i))
                if f.is_silenced(i) and self.silenced.is_set():
                    continue
                behind = now - due
                if behind > 1:
                    self.late_count[k] += 1
                self.late[k] = max(self.late[k], behind)
                body = renewal(time.time(), 20 + i % 60)
                # A renewal the API server did not answer is retried every
                # half second for up to a minute, as an edge retries (the
                # restart phase takes the server down for 5 s); so is one
                # answered `404 page not found`, as the real API server
                # answers for custom resources for a few seconds after it
                # starts (an edge falls back to its status meanwhile).
                give_up = time.monotonic() + 60
                while True:
                    try:
                        self.api.request(conn, "PATCH", f"{LEASES}/{f.names[i]}", body, MERGE)
                        break
                    except (OSError, http.client.HTTPException, RuntimeError) as e:
                        if isinstance(e, RuntimeError) and "404 page not found" not in str(e):
                            raise
                        conn.close()
                        if time.monotonic() > give_up or self.stop.is_set():
                            raise
                        time.sleep(0.5)
                        conn = self.api.connection(timeout=60)
                self.last[i] = time.time()
                self.sent[k] += 1
        except Exception as e:  # surfaced by check()
            self.errors.append(e)
        finally:
            conn.close()

    def total(self):
        return sum(self.sent)

    def check(self):
        if self.errors:
            raise RuntimeError(f"the load generator failed: {self.errors[0]}")

    def halt(self):
        self.stop.set()
        for th in self.threads:
            th.join(10)


# --- a watch of the sites: each site's phases, as they are written -------------------------

class PhaseWatch:
    """Watches every site from a resourceVersion on and records when each
    one was first seen in each phase (wall clock, on arrival here)."""

    def __init__(self, api, fleet, resource_version):
        self.api, self.fleet = api, fleet
        self.rv = resource_version
        self.index = {n: i for i, n in enumerate(fleet.names)}
        self.phase = [None] * fleet.n
        self.first = {}  # (i, phase) -> wall time
        self.with_phase = 0
        self.events = 0
        self.lock = threading.Lock()
        self.error = None
        self.stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while not self.stop.is_set() and not STOP.is_set():
            conn = self.api.connection(timeout=30)
            try:
                path = (f"{SITES}?watch=1&allowWatchBookmarks=true&timeoutSeconds=600"
                        f"&resourceVersion={self.rv}")
                conn.request("GET", path, headers=self.api.headers)
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch: {resp.status} {resp.read()[:300]!r}")
                while not self.stop.is_set():
                    try:
                        line = resp.readline()
                    except TimeoutError:
                        continue
                    if not line:
                        break
                    self._event(line)
            except Exception as e:  # a broken watch resumes from the last resourceVersion
                if self.stop.is_set():
                    return
                if "410" in str(e) or "Expired" in str(e):
                    self.error = e
                    return
                time.sleep(0.5)
            finally:
                conn.close()

    # Read off the event's bytes, not decoded: at 100,000 sites the first
    # sync is 100,000 events of ~3 KB, and a harness decoding them would
    # lag the hub it measures. The event's type comes first; the object's
    # name and resourceVersion are the first such keys (metadata's keys are
    # sorted; nothing before them is named "name"); "phase" is status.phase.
    EVENT = re.compile(rb'^\{"type":"(\w+)"')
    NAME = re.compile(rb'"name":"([^"]+)"')
    RV = re.compile(rb'"resourceVersion":"([^"]+)"')
    PHASE = re.compile(rb'"phase":"(\w+)"')

    def _event(self, line):
        now = time.time()
        m = self.EVENT.match(line)
        if not m:
            raise RuntimeError(f"watch: not an event: {line[:200]!r}")
        kind = m.group(1).decode()
        if kind == "ERROR":
            raise RuntimeError(f"watch ERROR: {line[:300]!r}")
        rv = self.RV.search(line)
        if rv:
            self.rv = rv.group(1).decode()
        if kind not in ("ADDED", "MODIFIED"):
            return
        name = self.NAME.search(line)
        i = self.index.get(name.group(1).decode()) if name else None
        if i is None:
            return
        ph = self.PHASE.search(line)
        phase = ph.group(1).decode() if ph else None
        with self.lock:
            self.events += 1
            if phase and self.phase[i] is None:
                self.with_phase += 1
            if phase:
                self.phase[i] = phase
                self.first.setdefault((i, phase), now)

    def count(self, phase, indices):
        with self.lock:
            return sum(1 for i in indices if self.phase[i] == phase)

    def first_seen(self, i, phase):
        with self.lock:
            return self.first.get((i, phase))

    def close(self):
        self.stop.set()


# --- the hub ---------------------------------------------------------------------------------

def hub_argv(bin_dir, kubeconfig, identity, leader_elect, lease_duration, cluster_label):
    argv = [bin_dir / "fleet-operator", "--federation-role", "hub", "--kubeconfig", kubeconfig,
            "--health-addr", "127.0.0.1:0", "--secure-addr", "127.0.0.1:0",
            "--leader-identity", identity, "--leader-elect", "true" if leader_elect else "false",
            "--metrics-auth", "false", "--metrics-cluster-label", "true" if cluster_label else "false"]
    if lease_duration:
        argv += ["--lease-duration", lease_duration]
    argv += ["--status-write-qps", str(STATUS_WRITES["qps"]),
             "--status-write-burst", str(STATUS_WRITES["burst"])]
    return argv


def hub_record(api, conn):
    """status.hub of the `fleet` object, or None."""
    try:
        obj = api.get_json(FLEET, conn)
    except RuntimeError as e:
        if " 404 " in str(e):
            return None
        raise
    return (obj.get("status") or {}).get("hub")


def wait_record(api, p, leader, not_before, deadline, poll=0.25):
    """Polls the liveness record until `leader` wrote one judging every site
    at or after `not_before` (whole seconds, hub clock = this clock); returns
    (wall time seen here, the record)."""
    conn = api.connection(timeout=30)
    try:
        while True:
            if STOP.is_set():
                raise TimeLimit("stopped")
            if p.poll() is not None:
                raise RuntimeError(f"the hub exited ({p.returncode}); see {p.log_path}")
            rec = hub_record(api, conn)
            if rec and rec.get("leader") == leader and rec.get("lastJudgementTime") \
                    and parse_time(rec["lastJudgementTime"]) >= int(not_before):
                return time.time(), rec
            if time.monotonic() > deadline:
                return None, rec
            time.sleep(poll)
    finally:
        conn.close()


def log_addr(p, text, deadline):
    """The address the hub logged with `text` (e.g. "serving HTTPS")."""
    while time.monotonic() < deadline:
        for line in Path(p.log_path).read_text(errors="replace").splitlines():
            if text in line:
                m = re.search(r"127\.0\.0\.1:\d+", line)
                if m:
                    return m.group(0)
        time.sleep(0.2)
    return None


def scrape(addr):
    """The hub's /metrics text (--metrics-auth=false), or ''."""
    if not addr:
        return ""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)
    try:
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        return resp.read().decode(errors="replace") if resp.status == 200 else ""
    except OSError:
        return ""
    finally:
        conn.close()


SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def metric(text, name, label=None):
    total = 0.0
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and m.group(1) == name and (label is None or label in (m.group(2) or "")):
            total += float(m.group(3))
    return total


def lag_quantile(text, q):
    """Upper bound of the bucket holding quantile q of the watch lag."""
    buckets = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and m.group(1) == "fleet_hub_watch_event_lag_seconds_bucket":
            le = re.search(r'le="([^"]+)"', m.group(2) or "").group(1)
            buckets.append((float("inf") if le == "+Inf" else float(le), float(m.group(3))))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return None
    want = q * buckets[-1][1]
    return next(le for le, c in buckets if c >= want)


# --- measuring a command -------------------------------------------------------------------

def measure(argv, env):
    """(wall s, cpu s, peak RSS bytes) of one process: wall around it, CPU
    from wait4, peak RSS from GNU time's %M (time forks the command from its
    own small image; ru_maxrss seen from here would count Python's pages)."""
    err = tempfile.TemporaryFile()
    with tempfile.NamedTemporaryFile("r") as rss_file:
        timed = [TIME, "-f", "%M", "-o", rss_file.name, *argv]
        t = time.perf_counter()
        proc = subprocess.Popen(timed, env=env, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {err.read()[-2000:]!r}")
        rss_kib = int(rss_file.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss_kib * 1024


# Pages of 500 following `continue`, as a user with curl reads the list.
# The real API server pretty-prints JSON for curl's User-Agent
# (`"continue": "…"`), kube-sandbox does not: the token is found either way.
PAGED_CURL = r"""
set -eu
url="$1"; shift
cont=""
pages=0
while :; do
  if [ -n "$cont" ]; then q="$url?limit=500&continue=$cont"; else q="$url?limit=500"; fi
  out=$(curl "$@" "$q")
  pages=$((pages + 1))
  cont=$(printf '%s' "$out" | tail -c 4096 | grep -o '"continue": *"[^"]*"' | head -n 1 | cut -d'"' -f4 \
         | sed -e 's/%/%25/g' -e 's/+/%2B/g' -e 's#/#%2F#g' -e 's/=/%3D/g') || true
  if [ -z "$cont" ]; then
    cont=$(printf '%s' "$out" | head -c 4096 | grep -o '"continue": *"[^"]*"' | head -n 1 | cut -d'"' -f4 \
           | sed -e 's/%/%25/g' -e 's/+/%2B/g' -e 's#/#%2F#g' -e 's/=/%3D/g') || true
  fi
  [ -n "$cont" ] || break
done
echo "$pages" >&2
"""


# --- the run -------------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.rows = []

    def emit(self, phase, measure_, value, unit, target=""):
        rec = {"goal": f"100k {phase}", "measure": measure_, "value": value, "unit": unit, "target": target}
        print(PREFIX + json.dumps(rec, ensure_ascii=False), flush=True)
        self.rows.append(rec)


def judge(value, target):
    m = re.match(r"^\s*(≤|<=|≥|>=)\s*([0-9][0-9,_]*(?:\.[0-9]+)?)", target)
    if not m:
        return ""
    num = float(m.group(2).replace(",", "").replace("_", ""))
    ok = value <= num if m.group(1) in ("≤", "<=") else value >= num
    return "met" if ok else "**not met**"


def fmt(v):
    if isinstance(v, int) or (float(v).is_integer() and abs(v) >= 100):
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    if abs(v) >= 0.1:
        return f"{v:.2f}"
    return f"{v:.3f}"


class Run:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.procs = Procs()
        self.out = Results()
        self.notes = []
        self.fleet = Fleet(args.sites, args.silenced, args.interval, args.silence_interval)
        self.bin = Path(args.bin_dir)
        self.renewer = None
        self.watch = None
        self.hub = None
        self.hub_judged = False  # a hub wrote every site's phase
        self.sandbox = None
        self.realdir = None  # --api real: what tools/realapi/start.sh made
        self.servers = {}  # name -> pid of the API server's processes

    def server_name(self):
        return "the real API server" if self.args.api == "real" else "kube-sandbox"

    def start_server(self):
        if self.args.api == "real":
            self.start_real()
        else:
            self.start_sandbox()
        self.env = dict(os.environ, KUBECONFIG=str(self.api.kubeconfig))
        subprocess.run(["kubectl", "apply", "--server-side", "-f", str(ROOT / "deploy/crds")], env=self.env,
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["kubectl", "wait", "--for=condition=Established", "--timeout=60s",
                        f"crd/federatedclusters.{GROUP}", f"crd/federatedclusterleases.{GROUP}",
                        f"crd/federationstatuses.{GROUP}"], env=self.env, check=True, stdout=subprocess.DEVNULL)
        if self.sandbox:  # the real server alone serves no namespaces
            subprocess.run(["kubectl", "create", "namespace", "fleet-system"], env=self.env, check=True,
                           stdout=subprocess.DEVNULL)
        for _ in range(300):  # served: discovery names the resources
            served = {r["name"] for r in self.api.get_json(f"/apis/{API}").get("resources", [])}
            if {"federatedclusters/status", "federatedclusterleases"} <= served:
                break
            time.sleep(0.1)

    def start_real(self):
        self.realdir = self.work / "realapi"
        realapi_start(self.realdir)
        self.servers = {name: int((self.realdir / f"{name}.pid").read_text()) for name in ("apiserver", "etcd")}
        self.api = Api(self.realdir / "kubeconfig", self.work)
        log(f"real API server on {self.api.server} (apiserver pid {self.servers['apiserver']}, "
            f"etcd pid {self.servers['etcd']})")

    def restart_real(self):
        """Kills the real API server (SIGKILL) and starts it again with the
        same flags SANDBOX_RESTART_DOWN seconds later; returns when it was
        stopped. Its new watch caches start at etcd's current revision."""
        pid = self.servers["apiserver"]
        argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
        t0 = time.time()
        os.kill(pid, signal.SIGKILL)
        while time.time() - t0 < 60:  # start.sh's child, not ours: gone, or a zombie
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            except OSError:
                break
            time.sleep(0.05)
        time.sleep(max(0.0, t0 + SANDBOX_RESTART_DOWN - time.time()))
        p = self.procs.start("apiserver (restarted)", argv, self.work / "apiserver-restarted.log")
        (self.realdir / "apiserver.pid").write_text(f"{p.pid}\n")  # for tools/realapi/stop.sh
        self.servers["apiserver"] = p.pid
        return t0

    def stop_server(self):
        if self.realdir:
            realapi_stop(self.realdir)

    def start_sandbox(self):
        kc = self.work / "admin.kubeconfig"
        argv = [self.bin / "kube-sandbox", "serve", "--kubeconfig", kc,
                "--streaming-lists", self.args.streaming_lists]
        self.sandbox = self.procs.start("kube-sandbox", argv, self.work / "sandbox.log")
        deadline = time.monotonic() + 60
        while not kc.exists():
            if self.sandbox.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kube-sandbox did not start; see {self.work / 'sandbox.log'}")
            time.sleep(0.05)
        self.api = Api(kc, self.work)
        self.servers = {"kube-sandbox": self.sandbox.pid}

    def hub_env(self):
        """The hubs' environment: this one's, with --hub-env on top."""
        return dict(os.environ, **dict(kv.split("=", 1) for kv in self.args.hub_env))

    def do_preload(self):
        f = self.fleet
        log(f"preloading {f.n:,} sites ({f.n - f.silenced:,} at {f.interval} s, {f.silenced:,} at "
            f"{f.silence_interval} s) with {self.args.preload_procs} processes x {self.args.preload_threads} threads")
        took = preload(self.api, f, self.args.preload_procs, self.args.preload_threads)
        self.out.emit("preload", f"{f.n:,} sites, each: apply, status patch, lease apply, lease renewal "
                      f"({self.args.preload_procs}x{self.args.preload_threads} keep-alive connections)",
                      took, "s")
        self.out.emit("preload", "requests per second during the preload", 4 * f.n / took, "req/s")
        for name, pid in self.servers.items():
            self.out.emit("preload", f"{name} RSS holding {f.n:,} sites and leases", proc_mem(pid)[0] / MIB, "MiB")
        lst = self.api.get_json(f"{SITES}?limit=1")
        self.rv = lst["metadata"]["resourceVersion"]
        one = self.api.get_json(f"{SITES}/{f.names[1]}")
        self.out.emit("preload", "one site as served (JSON, a site without signals)",
                      len(json.dumps(one, separators=(",", ":"))), "B")

    def start_load(self):
        self.renewer = Renewer(self.api, self.fleet, self.args.renew_threads)
        self.renewer.start()
        self.watch = PhaseWatch(self.api, self.fleet, self.rv)
        log(f"load generator: {self.fleet.n - self.fleet.silenced:,} leases every {self.fleet.interval} s and "
            f"{self.fleet.silenced:,} every {self.fleet.silence_interval} s "
            f"({(self.fleet.n - self.fleet.silenced) / self.fleet.interval + self.fleet.silenced / self.fleet.silence_interval:,.0f}/s)")

    def wait(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if STOP.is_set():
                raise TimeLimit("stopped")
            if self.renewer:
                self.renewer.check()
            time.sleep(min(1.0, max(0.0, end - time.monotonic())))

    def phase_hub(self):
        f = self.fleet
        args = self.args
        self.hub = self.procs.start("hub", hub_argv(self.bin, self.api.kubeconfig, "hub-bench", False, None,
                                                    args.metrics_cluster_label),
                                    self.work / "hub.log", env=self.hub_env())
        p = self.hub
        limit = time.monotonic() + args.judge_timeout
        peak_seen = 0
        rec_at = rec = None
        all_phase_at = None
        last_log = time.monotonic()
        conn = self.api.connection(timeout=30)
        try:
            while time.monotonic() < limit and (rec_at is None or all_phase_at is None):
                if STOP.is_set():
                    raise TimeLimit("stopped")
                if p.poll() is not None:
                    raise RuntimeError(f"the hub exited ({p.returncode}); see {p.log_path}")
                self.renewer.check()
                peak_seen = max(peak_seen, proc_mem(p.pid)[1])
                if rec_at is None:
                    r = hub_record(self.api, conn)
                    if r and r.get("lastJudgementTime"):
                        rec_at, rec = time.time(), r
                        log(f"liveness record after {rec_at - p.started_wall:.1f} s: {r}")
                if all_phase_at is None and self.watch.with_phase == f.n:
                    all_phase_at = time.time()
                    log(f"every site has a phase after {all_phase_at - p.started_wall:.1f} s")
                if time.monotonic() - last_log > 15:
                    cpu = proc_cpu(p.pid)
                    rss, hwm = proc_mem(p.pid)
                    log(f"hub {time.monotonic() - p.started:.0f} s: {self.watch.with_phase:,} sites with a phase, "
                        f"cpu {cpu:.1f} s, rss {rss / MIB:.0f} MiB, peak {hwm / MIB:.0f} MiB; "
                        f"{self.renewer.total():,} renewals sent")
                    last_log = time.monotonic()
                time.sleep(0.25)
        finally:
            conn.close()
        self.hub_addr = log_addr(p, "serving HTTPS", time.monotonic() + 5)
        cpu = proc_cpu(p.pid)
        rss, hwm = proc_mem(p.pid)
        m = scrape(self.hub_addr)
        if m:
            mode = [k for k in ("streaming", "paged") if metric(m, "fleet_hub_site_list_mode", f'mode="{k}"') == 1]
            how = (f"kube-sandbox --streaming-lists {args.streaming_lists}" if self.sandbox else
                   "the real API server")
            self.notes.append(f"cold start: the hub listed its sites {mode[0] if mode else 'in no mode it reported'}"
                              f" (fleet_hub_site_list_mode; {how}).")
        if rec_at is not None:
            self.out.emit("cold start", f"hub start to its liveness record (judged every site; {f.n:,} sites "
                          "never judged before)", rec_at - p.started_wall, "s", "≤ 30 s")
            self.out.emit("cold start", "hub start to the record's lastJudgementTime (its own clock, whole seconds)",
                          parse_time(rec["lastJudgementTime"]) - int(p.started_wall), "s")
        else:
            self.notes.append(f"cold start: no liveness record within {args.judge_timeout:.0f} s "
                              f"(--judge-timeout); {self.watch.with_phase:,} of {f.n:,} sites had a phase.")
        if all_phase_at is not None:
            self.out.emit("cold start", f"hub start to every site having a phase ({f.n:,} status writes)",
                          all_phase_at - p.started_wall, "s")
            # The first record vouches for judgements made, written or not
            # (Hub::judged_every_site gives a due write until the next check):
            # the first record made once every phase was written, too.
            self.hub_judged = True
            seen, _ = wait_record(self.api, p, "hub-bench", all_phase_at, time.monotonic() + 60)
            if seen is not None:
                self.out.emit("cold start", "hub start to its first liveness record after every phase was written",
                              seen - p.started_wall, "s")
        stuck = Path(p.log_path).read_text(errors="replace").count("have not been written since the last check")
        self.out.emit("cold start", "records withheld for unwritten judgements (hub log warnings) so far", stuck,
                      "checks")
        connected = self.watch.count("Connected", range(f.n))
        self.out.emit("cold start", "sites Connected at that point", connected, "sites", f"≥ {f.n}")
        self.out.emit("cold start", "hub CPU from start to that point", cpu, "s")
        self.out.emit("RSS", "hub peak RSS (VmHWM) through the first sync", hwm / MIB, "MiB", "≤ 300 MiB")
        self.out.emit("RSS", "hub RSS right after the first sync", rss / MIB, "MiB")
        self.first_sync_hwm = hwm

    def phase_steady(self):
        p, r = self.hub, self.renewer
        self.wait(self.args.settle)
        m0 = scrape(self.hub_addr)
        cpu0, sent0, t0 = proc_cpu(p.pid), r.total(), time.monotonic()
        sb0, me0 = {n: proc_cpu(pid) for n, pid in self.servers.items()}, self_cpu()
        rss_max = 0
        rss_samples = []
        end = t0 + self.args.steady_seconds
        while time.monotonic() < end:
            self.wait(min(5, end - time.monotonic()))
            rss, _ = proc_mem(p.pid)
            rss_max = max(rss_max, rss)
            rss_samples.append(rss)
        secs = time.monotonic() - t0
        cpu = proc_cpu(p.pid) - cpu0
        sent = r.total() - sent0
        sb, me = {n: proc_cpu(pid) - sb0[n] for n, pid in self.servers.items()}, self_cpu() - me0
        m1 = scrape(self.hub_addr)
        rss, hwm = proc_mem(p.pid)
        rate = sent / secs
        self.out.emit("steady", f"renewals sent per second ({secs:.0f} s window; target "
                      f"{self.target_rate():,.1f}/s)", rate, "/s")
        self.out.emit("steady", "hub CPU over the window", 100 * cpu / secs, "% of a core")
        self.out.emit("steady", "hub CPU per renewal", 1000 * cpu / max(1, sent), "ms")
        if rate >= 0.9 * 100000 / 30:
            self.out.emit("steady", "hub CPU per renewal times 3,333/s (100k sites / 30 s; scaled from the rate "
                          "above)", cpu / max(1, sent) * 100000 / 30, "cores", "≤ 0.5")
        else:
            # Far below the rate, the hub's periodic work over every site
            # (and any first-sighting writes) is most of its CPU: a figure
            # per renewal scaled to 3,333/s would overstate it several times.
            self.notes.append(f"steady: {rate:,.0f} renewals/s is far below 3,333/s, so the hub's CPU per renewal "
                              "is not scaled to it (the Rate axis: --sites 100000 --interval 30).")
        for name, cpu_s in sb.items():
            self.out.emit("steady", f"{name} CPU over the window", 100 * cpu_s / secs, "% of a core")
        self.out.emit("steady", "load generator and watch (this harness) CPU over the window", 100 * me / secs,
                      "% of a core")
        self.out.emit("RSS", "hub RSS in the steady window, highest", rss_max / MIB, "MiB", "≤ 300 MiB")
        self.out.emit("RSS", "hub RSS in the steady window, median", statistics.median(rss_samples) / MIB, "MiB")
        self.out.emit("RSS", "hub peak RSS (VmHWM) at the window's end", hwm / MIB, "MiB")
        late = sum(r.late_count)
        self.out.emit("steady", "renewals sent more than 1 s behind schedule (since the load started)", late,
                      "renewals")
        self.out.emit("steady", "latest a renewal was sent behind schedule", max(r.late), "s")
        if m0 and m1:
            via_lease = metric(m1, "fleet_hub_heartbeats_total", 'via="lease"') - \
                metric(m0, "fleet_hub_heartbeats_total", 'via="lease"')
            self.out.emit("steady", "renewals the hub counted in the window (fleet_hub_heartbeats_total{via=\"lease\"})",
                          via_lease, "heartbeats")
            n = metric(m1, "fleet_hub_watch_event_lag_seconds_count") - metric(m0, "fleet_hub_watch_event_lag_seconds_count")
            s = metric(m1, "fleet_hub_watch_event_lag_seconds_sum") - metric(m0, "fleet_hub_watch_event_lag_seconds_sum")
            if n > 0:
                self.out.emit("steady", "watch event lag, mean (fleet_hub_watch_event_lag_seconds)", s / n, "s")
            p99 = lag_quantile(m1, 0.99)
            if p99 is not None:
                self.out.emit("steady", "watch event lag, p99 bucket since start (upper bound)", p99, "s")
        else:
            self.notes.append("steady: the hub's /metrics could not be read; its counters are not reported.")

    def target_rate(self):
        f = self.fleet
        return (f.n - f.silenced) / f.interval + f.silenced / f.silence_interval

    def phase_restart(self):
        f, p = self.fleet, self.hub
        # The harness's own watch would be told 410 too: it stops, and a
        # new one follows the writes made after the restart.
        if self.watch:
            self.watch.close()
        m0 = scrape(self.hub_addr)
        rss0, hwm0 = proc_mem(p.pid)
        cpu0 = proc_cpu(p.pid)
        if self.sandbox:
            os.kill(self.sandbox.pid, signal.SIGUSR1)
            t0 = time.time()
            how = f"SIGUSR1 ({SANDBOX_RESTART_DOWN} s down, then 410 for every watch)"
        else:
            t0 = self.restart_real()
            how = f"SIGKILL to the real API server, started again {SANDBOX_RESTART_DOWN} s later,"
        t0_mono = time.monotonic() - (time.time() - t0)
        log(f"{self.server_name()} restarting; hub rss {rss0 / MIB:.0f} MiB, peak so far {hwm0 / MIB:.0f} MiB")
        up_at = t0 + SANDBOX_RESTART_DOWN
        served_at = None
        rss_max = rss0
        seen = rec = None
        deadline = t0_mono + self.args.judge_timeout
        conn = None
        while time.monotonic() < deadline:
            if STOP.is_set():
                raise TimeLimit("stopped")
            if p.poll() is not None:
                raise RuntimeError(f"the hub exited ({p.returncode}); see {p.log_path}")
            self.renewer.check()
            rss_max = max(rss_max, proc_mem(p.pid)[0])
            if time.time() > up_at + 1:
                try:
                    conn = conn or self.api.connection(timeout=30)
                    r = hub_record(self.api, conn)
                    served_at = served_at or time.time()
                except (OSError, http.client.HTTPException, RuntimeError):
                    if conn:
                        conn.close()
                    conn = None
                    r = None
                # Judged after the restart: a record made once the server
                # was up again, by a hub whose watches were told 410.
                if r and r.get("lastJudgementTime") and parse_time(r["lastJudgementTime"]) >= int(up_at) + 1:
                    seen, rec = time.time(), r
                    break
            time.sleep(0.25)
        if conn:
            conn.close()
        if seen is None:
            self.notes.append(f"restart: no liveness record within {self.args.judge_timeout:.0f} s of the restart.")
            return
        rss, hwm = proc_mem(p.pid)
        self.out.emit("restart", f"{how} to the hub's first liveness record judging after it", seen - t0, "s",
                      "≤ 30 s")
        if self.sandbox:
            self.out.emit("restart", "of which the server was down", SANDBOX_RESTART_DOWN, "s")
        elif served_at:
            self.out.emit("restart", "of which the server was not serving (to the first answer to this harness, "
                          "polled every 0.25 s)", served_at - t0, "s")
        self.out.emit("RSS", "hub RSS before the restart", rss0 / MIB, "MiB")
        self.out.emit("RSS", "hub RSS through the re-list, highest sampled (every 0.25 s)", rss_max / MIB, "MiB")
        self.out.emit("RSS", "hub peak RSS (VmHWM) after the re-list (the process's peak so far)", hwm / MIB, "MiB")
        self.out.emit("restart", "hub CPU from the restart to that record", proc_cpu(p.pid) - cpu0, "s")
        # What the hub wrote for it: nothing, for a fleet whose edges kept
        # renewing (the 5 s down is blind time, not counted against a site).
        self.watch = PhaseWatch(self.api, f, self.api.get_json(f"{SITES}?limit=1")["metadata"]["resourceVersion"])
        self.wait(60)
        m1 = scrape(self.hub_addr)
        live = [i for i in range(f.n) if not f.is_silenced(i)]
        wrong = sum(1 for i in live if self.watch.first_seen(i, "Stale") or self.watch.first_seen(i, "Unreachable"))
        self.out.emit("restart", "live sites written Stale or Unreachable in the 60 s after the record", wrong,
                      "sites", "≤ 0")
        if m0 and m1:
            for name, what in [("fleet_hub_status_writes_total", "status writes"),
                               ("fleet_hub_reconciles_total", "reconciles")]:
                self.out.emit("restart", f"hub {what} from the restart to 60 s after the record ({name})",
                              metric(m1, name) - metric(m0, name), what.split()[-1])
        rss, _ = proc_mem(p.pid)
        self.out.emit("RSS", "hub RSS 60 s after the record", rss / MIB, "MiB")
        log(f"restart: record after {seen - t0:.1f} s; rss {rss0 / MIB:.0f} -> highest {rss_max / MIB:.0f} MiB, "
            f"VmHWM {hwm / MIB:.0f} MiB")

    def phase_stale(self):
        f, r = self.fleet, self.renewer
        silenced = range(f.n - f.silenced, f.n)
        if self.watch.count("Connected", silenced) < f.silenced:
            self.notes.append(f"stale: only {self.watch.count('Connected', silenced)} of {f.silenced} silenced sites "
                              "were Connected before the silence.")
        # Each silenced site renewed by the load generator at least once
        # (its last renewal is then known here): a short hub phase leaves
        # some with only the preload's.
        ready_by = time.monotonic() + f.silence_interval + 5
        while any(r.last[i] == 0 for i in silenced) and time.monotonic() < ready_by:
            self.wait(1)
        r.silenced.set()
        t = time.time()
        goal = 3 * f.silence_interval + 5
        # Past the burst, phases are written at the hub's
        # --status-write-qps: the backlog's time on top of the threshold.
        backlog = max(0, f.silenced - STATUS_WRITES["burst"]) / STATUS_WRITES["qps"]
        deadline = time.monotonic() + 3 * f.silence_interval + self.args.stale_grace + 1.5 * backlog
        # What the summary, the liveness record and /metrics say meanwhile:
        # the summary counts the silenced sites dark at the judgement, not
        # once their phases are written (docs/architecture.md#status-writes).
        told_at, oldest_record, most_pending, written_at = None, 0.0, 0.0, None
        scraped = 0.0
        conn = self.api.connection(timeout=30)
        try:
            while time.monotonic() < deadline:
                done = sum(1 for i in silenced if self.watch.first_seen(i, "Stale") is not None)
                if done == f.silenced and written_at is None:
                    written_at = time.time()
                try:
                    obj = self.api.get_json(FLEET, conn)
                except (RuntimeError, OSError):
                    conn.close()
                    conn = self.api.connection(timeout=30)
                    obj = {}
                st = obj.get("status") or {}
                if told_at is None and st.get("disconnectedClustersTotal", 0) >= f.silenced:
                    told_at = time.time()
                    log(f"stale: the summary counts {st.get('disconnectedClustersTotal'):,} sites dark, "
                        f"{told_at - t:.0f} s after the silence; {done:,} phases written")
                judged = (st.get("hub") or {}).get("lastJudgementTime")
                if judged:
                    oldest_record = max(oldest_record, time.time() - parse_time(judged))
                if f.silenced > 1000 and time.monotonic() - scraped > 10:
                    # Every 10 s: a scrape at 100,000 sites is megabytes.
                    scraped = time.monotonic()
                    most_pending = max(most_pending, metric(scrape(self.hub_addr),
                                                            "fleet_hub_status_writes_pending") or 0.0)
                if written_at is not None and told_at is not None:
                    break
                self.wait(1)
        finally:
            conn.close()
        if told_at is not None:
            self.out.emit("stale", f"{f.silenced:,} sites silenced: silence to the summary counting them all dark",
                          told_at - t, "s", f"≤ {goal + 5} s")
        else:
            self.notes.append("stale: the summary never counted every silenced site dark in time.")
        if written_at is not None:
            self.out.emit("stale", f"{f.silenced:,} sites silenced: silence to every one's phase written "
                          f"(--status-write-qps {STATUS_WRITES['qps']}, --status-write-burst "
                          f"{STATUS_WRITES['burst']})", written_at - t, "s")
        self.out.emit("stale", "liveness record age, at most, through the silence and its writes",
                      oldest_record, "s", "≤ 45 s")
        if f.silenced > 1000:
            self.out.emit("stale", "fleet_hub_status_writes_pending, highest seen", most_pending, "sites")
        if self.hub is not None:
            self.out.emit("RSS", "hub peak RSS (VmHWM) after the silence and its writes",
                          proc_mem(self.hub.pid)[1] / MIB, "MiB", "≤ 300 MiB")
        times, never = [], 0
        for i in silenced:
            seen = self.watch.first_seen(i, "Stale")
            if seen is None or r.last[i] == 0:
                never += 1
            else:
                times.append(seen - r.last[i])
        log(f"stale: {len(times)} of {f.silenced} Stale, {time.time() - t:.0f} s after the silence")
        if times:
            times.sort()
            label = f"{f.silenced:,} sites at I = {f.silence_interval} s silenced: last renewal to Stale"
            self.out.emit("stale", label + ", min", times[0], "s")
            self.out.emit("stale", label + ", median", statistics.median(times), "s")
            self.out.emit("stale", label + ", p99", times[min(len(times) - 1, int(0.99 * len(times)))], "s")
            self.out.emit("stale", label + ", max", times[-1], "s", f"≤ {goal} s")
        self.out.emit("stale", "silenced sites never seen Stale", never, "sites", "≤ 0")
        live_bad = sum(1 for i in range(f.n - f.silenced)
                       if self.watch.phase[i] not in (None, "Connected"))
        self.out.emit("stale", "renewing sites not Connected after it", live_bad, "sites", "≤ 0")

    def phase_failover(self):
        args = self.args
        if self.hub is not None:
            took = self.procs.stop(self.hub)
            log(f"the single hub stopped (SIGTERM) in {took:.1f} s")
            self.hub = None
        lease = args.lease_duration
        a = self.procs.start("hub-a", hub_argv(self.bin, self.api.kubeconfig, "hub-a", True, lease,
                                               args.metrics_cluster_label), self.work / "hub-a.log",
                             env=self.hub_env())
        seen, rec = wait_record(self.api, a, "hub-a", a.started_wall, time.monotonic() + args.judge_timeout)
        if seen is None:
            self.notes.append(f"failover: hub-a wrote no liveness record within {args.judge_timeout:.0f} s.")
            return
        judged_before = self.hub_judged
        label = "restart over the judged fleet" if judged_before else "start over the never-judged fleet"
        self.out.emit("failover", f"{label}: hub-a start (leader election on) to its liveness record",
                      seen - a.started_wall, "s", "≤ 30 s")
        self.out.emit("RSS", f"hub-a peak RSS (VmHWM) through its first sync ({label})",
                      proc_mem(a.pid)[1] / MIB, "MiB", "≤ 300 MiB")
        if not judged_before:
            # Without the hub phase, hub-a judges the fleet first: every
            # phase written, and a record made after that, so the failover
            # is of a leader in its steady state, not of its first writes.
            deadline = time.monotonic() + args.judge_timeout
            while self.watch.with_phase < self.fleet.n and time.monotonic() < deadline:
                self.wait(1)
            seen, _ = wait_record(self.api, a, "hub-a", time.time(), time.monotonic() + 120)
            if seen is None:
                self.notes.append("failover: hub-a did not judge the whole fleet in time; not measured.")
                return
            log(f"hub-a judged every site, {seen - a.started_wall:.0f} s after its start")
        b = self.procs.start("hub-b", hub_argv(self.bin, self.api.kubeconfig, "hub-b", True, lease,
                                               args.metrics_cluster_label), self.work / "hub-b.log",
                             env=self.hub_env())
        # The standby stands by and has listed the sites: its RSS, which
        # grows with the sites it caches (by ~60 MiB a 15 s at 100,000
        # sites, where the list is read at the pace of the hub's watch
        # pauses), has stopped growing: under 1 % over 10 s, twice running,
        # after at least 20 s. (Its CPU is no sign: the paced list uses
        # little.)
        deadline = time.monotonic() + args.judge_timeout
        while time.monotonic() < deadline:
            text = Path(b.log_path).read_text(errors="replace")
            if "standing by" in text:
                break
            self.wait(0.5)
        warm_from = time.monotonic()
        last, calm = proc_mem(b.pid)[0], 0
        while time.monotonic() < deadline:
            self.wait(10)
            now = proc_mem(b.pid)[0]
            calm = calm + 1 if now < last * 1.01 and time.monotonic() - warm_from >= 20 else 0
            last = now
            if calm >= 2:
                break
        log(f"hub-b standing by, warm after {time.monotonic() - warm_from:.0f} s more; rss "
            f"{proc_mem(b.pid)[0] / MIB:.0f} MiB")
        self.out.emit("failover", "hub-b (standby) start to its RSS steady (its list of the sites done)",
                      time.monotonic() - b.started, "s")
        self.out.emit("RSS", "hub-b (standby) RSS before the failover", proc_mem(b.pid)[0] / MIB, "MiB")
        # Die at once after a record, so the time is not a record period early.
        seen, _ = wait_record(self.api, a, "hub-a", time.time(), time.monotonic() + 60, poll=0.1)
        if seen is None:
            self.notes.append("failover: hub-a wrote no record in the 60 s before the kill (it was not judging).")
        killed = time.time()
        self.procs.stop(a, sig=signal.SIGKILL)
        seen, rec = wait_record(self.api, b, "hub-b", killed, time.monotonic() + args.judge_timeout)
        if seen is None:
            self.notes.append(f"failover: hub-b wrote no liveness record within {args.judge_timeout:.0f} s of "
                              "the leader's SIGKILL.")
            return
        self.out.emit("failover", f"SIGKILL of the leader to the new leader's liveness record (lease "
                      f"{lease or '15s (default)'})", seen - killed, "s", "≤ 30 s")
        if rec.get("leaderSince"):
            self.out.emit("failover", "of which: SIGKILL to the new leader's leaderSince (whole seconds)",
                          parse_time(rec["leaderSince"]) - int(killed), "s")
        self.out.emit("RSS", "hub-b peak RSS (VmHWM) after taking over", proc_mem(b.pid)[1] / MIB, "MiB", "≤ 300 MiB")
        self.procs.stop(b)

    def phase_status(self):
        if self.renewer:
            self.renewer.halt()
        if self.watch:
            self.watch.close()
        for p in [self.hub]:
            if p is not None:
                self.procs.stop(p)
        self.hub = None
        f = self.fleet
        fleet_bin = str(self.bin / "kubectl-fleet")
        url = self.api.server + SITES
        paged = self.work / "paged-curl.sh"
        paged.write_text(PAGED_CURL)
        curl_args = self.api.curl()[1:]
        cmds = [
            ("curl: GET of the whole list, one request", self.api.curl("-o", "/dev/null", url)),
            ("curl: pages of 500 (`limit`/`continue`)", ["bash", str(paged), url, *curl_args]),
        ] + ([] if self.args.skip_kubectl else [
            ("kubectl get fc -o json (pages of 500)", ["kubectl", "get", "fc", "-o", "json"]),
            ("kubectl get fc (pages of 500)", ["kubectl", "get", "fc"]),
        ]) + [
            ("kubectl fleet status -o json", [fleet_bin, "status", "-o", "json"]),
            ("kubectl fleet status", [fleet_bin, "status"]),
        ]
        help_text = subprocess.run([fleet_bin, "status", "--help"], capture_output=True, text=True).stdout
        if "--summary" in help_text:
            cmds.append(("kubectl fleet status --summary", [fleet_bin, "status", "--summary"]))
        else:
            self.notes.append("status: `kubectl fleet status --summary` does not exist in this build: not measured.")
        out = subprocess.run([fleet_bin, "status", "-o", "json"], env=self.env, capture_output=True, check=True)
        sites = json.loads(out.stdout).get("sites", [])
        if len(sites) != f.n:
            self.notes.append(f"status: `status -o json` listed {len(sites):,} sites of {f.n:,}.")
        whole = subprocess.run(self.api.curl(url), capture_output=True, check=True).stdout
        self.out.emit("status", "the list as one response (JSON)", len(whole) / MIB, "MiB")
        self.out.emit("status", "`status -o json` output", len(out.stdout) / MIB, "MiB")
        samples = {name: [] for name, _ in cmds}
        for name, argv in cmds:  # warm-up: discovery cache, page cache
            measure(argv, self.env)
        for _ in range(self.args.repeat):
            for name, argv in cmds:
                if STOP.is_set():
                    raise TimeLimit("stopped")
                samples[name].append(measure(argv, self.env))
        self.status_table = []
        curl_wall = statistics.median(s[0] for s in samples[cmds[0][0]])
        for name, runs in samples.items():
            wall, cpu, rss = (statistics.median(r[k] for r in runs) for k in range(3))
            self.status_table.append((name, wall, cpu, rss))
            self.out.emit("status", f"{name}: wall ({f.n:,} sites)", wall, "s")
            self.out.emit("status", f"{name}: CPU", cpu, "s")
            self.out.emit("status", f"{name}: peak RSS", rss / MIB, "MiB")
            if name.startswith("kubectl fleet"):
                self.out.emit("status", f"{name}: wall / curl's one GET", wall / curl_wall, "×")


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({model}){mem}"


def report(run, args, started, load, elapsed, commit, stopped):
    f = run.fleet
    cmd = "python3 tools/bench/hub_100k.py " + " ".join(sys.argv[1:])
    lines = [
        SECTION, "",
        f"Run of {started}; {machine()}; load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        f"(1/5/15 min), shared with other work; whole run {elapsed:.0f} s.", "",
        f"Binaries: release builds from `{args.bin_dir}`, of commit `{commit}`.", "",
        f"Command: `{cmd.strip()}`", "",
        f"Fleet: {f.n:,} sites on "
        + (f"kube-sandbox (streaming lists {args.streaming_lists})" if args.api == "sandbox" else
           "the real API server (tools/realapi alone: apiextensions-apiserver and etcd; etcd without fsync)")
        + f"; {f.n - f.silenced:,} with `heartbeatIntervalSeconds: "
        f"{f.interval}` and {f.silenced:,} with {f.silence_interval} (the ones silenced); every lease renewed "
        f"at its site's interval by the harness ({run.target_rate():,.1f} renewals/s). Hub flags beyond the "
        f"test defaults: `--metrics-auth=false` (so the harness reads /metrics), `--metrics-cluster-label="
        f"{'true' if args.metrics_cluster_label else 'false'}`, `--status-write-qps {STATUS_WRITES['qps']} "
        f"--status-write-burst {STATUS_WRITES['burst']}`"
        + "".join(f"; environment `{kv}`" for kv in args.hub_env)
        + f". Phases run: {', '.join(args.phases)}.", "",
        "| phase | measure | value | unit | goal | |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]
    for r in run.out.rows:
        lines.append(f"| {r['goal'][5:]} | {r['measure'].replace('|', '/')} | {fmt(r['value'])} | {r['unit']} "
                     f"| {r['target']} | {judge(r['value'], r['target'])} |")
    lines.append("")
    if getattr(run, "status_table", None):
        lines += ["| command (" + f"{f.n:,}" + " sites) | wall s | CPU s | peak RSS MiB |",
                  "| --- | ---: | ---: | ---: |"]
        for name, wall, cpu, rss in run.status_table:
            lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {rss / MIB:.1f} |")
        lines.append("")
        lines.append(f"Medians of {args.repeat} interleaved runs after one warm-up each, with the load generator "
                     "and the hubs stopped.")
        lines.append("")
    notes = list(run.notes)
    if stopped:
        notes.append(f"**The run was cut short**: {stopped}. Only the figures above were measured.")
    for n in notes:
        lines.append(f"- {n}")
    if notes:
        lines.append("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sites", type=int, default=100_000, help="sites to preload (default 100000)")
    ap.add_argument("--interval", type=int, default=300, help="heartbeatIntervalSeconds of most sites (default 300)")
    ap.add_argument("--silenced", type=int, default=1000, help="sites silenced for the Stale measure (default 1000)")
    ap.add_argument("--silence-interval", type=int, default=30,
                    help="heartbeatIntervalSeconds of the silenced sites (default 30; the CRD allows 10-3600)")
    ap.add_argument("--phases", default=",".join(PHASES),
                    help=f"comma-separated, of {','.join(PHASES)} (default all; steady and stale start a hub)")
    ap.add_argument("--steady-seconds", type=float, default=300, help="steady window (default 300)")
    ap.add_argument("--settle", type=float, default=15, help="seconds between the first sync and the window")
    ap.add_argument("--stale-grace", type=float, default=60,
                    help="seconds past 3*I to wait for Stale before giving up (default 60)")
    ap.add_argument("--judge-timeout", type=float, default=900,
                    help="seconds a hub may take to its first liveness record (default 900)")
    ap.add_argument("--lease-duration", help="the hubs' --lease-duration in the failover (default: the operator's)")
    ap.add_argument("--metrics-cluster-label", action="store_true",
                    help="keep the hub's per-site latency histograms (default off, as docs/observability.md "
                         "advises past a few thousand sites)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each status command (default 3)")
    ap.add_argument("--skip-kubectl", action="store_true",
                    help="status: leave out `kubectl get fc` (slow at 100,000 sites)")
    ap.add_argument("--preload-procs", type=int, default=2)
    ap.add_argument("--preload-threads", type=int, default=4)
    ap.add_argument("--renew-threads", type=int, default=4)
    ap.add_argument("--bin-dir", default=str(ROOT / "target/release"), help="the release binaries")
    ap.add_argument("--status-write-qps", type=int, default=STATUS_WRITES["qps"],
                    help="the hubs' --status-write-qps (default: the operator's, 200)")
    ap.add_argument("--status-write-burst", type=int, default=STATUS_WRITES["burst"],
                    help="the hubs' --status-write-burst (default: the operator's, 2000)")
    ap.add_argument("--api", choices=["sandbox", "real"], default="sandbox",
                    help="the API server: kube-sandbox (default) or the real apiextensions-apiserver and etcd of "
                         "tools/realapi (build it with tools/realapi/build.sh); the failover phase needs kube-sandbox")
    ap.add_argument("--streaming-lists", choices=["served", "refused", "ignored"], default="served",
                    help="how kube-sandbox answers a streaming list (its serve flag; default served): refused "
                         "or ignored is the drill 'streaming lists unavailable', the hub then lists in pages")
    ap.add_argument("--hub-env", action="append", default=[], metavar="NAME=VALUE",
                    help="set in every hub's environment (repeatable), e.g. MALLOC_ARENA_MAX=2 to compare the "
                         "allocator's settings")
    ap.add_argument("--time-limit", type=float, default=3600, help="seconds the whole run may take (default 3600)")
    ap.add_argument("--write-section", metavar="FILE", help=f"replace the '{SECTION}' section of FILE")
    ap.add_argument("--smoke", action="store_true", help="2,000 sites, short windows: does the harness work?")
    args = ap.parse_args()
    if args.smoke:
        args.sites, args.silenced, args.interval = 2000, 100, 60
        args.steady_seconds, args.settle, args.repeat, args.stale_grace = 30, 5, 1, 30
    args.phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if args.api == "real" and args.phases == PHASES:  # every phase the real server alone can run
        args.phases = [p for p in PHASES if p != "failover"]
    STATUS_WRITES.update(qps=args.status_write_qps, burst=args.status_write_burst)
    for kv in args.hub_env:
        if "=" not in kv or not kv.split("=", 1)[0]:
            sys.exit(f"hub_100k: --hub-env {kv!r}: expected NAME=VALUE")
    bad = [p for p in args.phases if p not in PHASES]
    if bad:
        sys.exit(f"hub_100k: unknown phase {bad[0]!r}; the phases are {', '.join(PHASES)}")
    if not (10 <= args.interval <= 3600 and 10 <= args.silence_interval <= 3600):
        sys.exit("hub_100k: --interval and --silence-interval must be 10-3600 s (the CRD's range)")
    if args.sites < 1 or not 0 <= args.silenced < args.sites or args.time_limit <= 0:
        sys.exit("hub_100k: --sites must be positive, --silenced below it, --time-limit positive")
    for tool in ["curl", "kubectl", TIME]:
        if not shutil.which(tool):
            sys.exit(f"hub_100k: {tool} is required")
    if args.api == "real":
        if "failover" in args.phases:
            sys.exit("hub_100k: --api real cannot run the failover phase (the real server alone serves no "
                     "coordination.k8s.io leases); leave it out of --phases")
        if args.streaming_lists != "served":
            sys.exit("hub_100k: --streaming-lists is kube-sandbox's; the real API server serves streaming lists")
        missing = realapi_built()
        if missing:
            sys.exit(f"hub_100k: {missing}")
    for b in ["fleet-operator", "kubectl-fleet"] + (["kube-sandbox"] if args.api == "sandbox" else []):
        if not (Path(args.bin_dir) / b).exists():
            sys.exit(f"hub_100k: {Path(args.bin_dir) / b} not found: build with `cargo build --release --workspace "
                     "--bin fleet-operator --bin kube-sandbox --bin kubectl-fleet`")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "src", "crates",
                            "kube-sandbox"], capture_output=True, text=True).stdout.strip()
    if dirty:
        commit += " (with uncommitted changes)"

    bounded("hub_100k", args.time_limit, STOP)

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="fleet-hub-100k-"))
    run = Run(args, work)
    t0 = time.monotonic()
    stopped = None
    try:
        run.start_server()
        run.do_preload()
        wants_hub = any(p in args.phases for p in ("hub", "steady", "restart", "stale"))
        if wants_hub or "failover" in args.phases:
            run.start_load()
        if wants_hub:
            run.phase_hub()
        if "steady" in args.phases:
            run.phase_steady()
        if "stale" in args.phases:
            run.phase_stale()
        if "restart" in args.phases:
            run.phase_restart()
        if "failover" in args.phases:
            run.phase_failover()
        if "status" in args.phases:
            run.phase_status()
    except TimeLimit as e:
        stopped = str(e)
    except Exception as e:
        stopped = f"{type(e).__name__}: {e}"
        import traceback
        traceback.print_exc()
    finally:
        unbounded()
        STOP.set()
        if run.renewer:
            run.renewer.halt()
        if run.watch:
            run.watch.close()
        run.procs.stop_all()
        run.stop_server()
        logs = Path(tempfile.gettempdir()) / "fleet-hub-100k-logs"
        logs.mkdir(exist_ok=True)
        for path in [*work.glob("*.log"), *work.glob("realapi/*.log")]:
            shutil.copy(path, logs / path.name)
        log(f"the processes' logs are in {logs}")
        shutil.rmtree(work, ignore_errors=True)
    text = report(run, args, started, load, time.monotonic() - t0, commit, stopped)
    print(text)
    if args.write_section:
        path = Path(args.write_section)
        old = path.read_text() if path.exists() else ""
        start = old.find(SECTION)
        if start < 0:
            new = old.rstrip("\n") + ("\n\n" if old else "") + text
        else:
            end = old.find("\n## ", start + len(SECTION))
            new = old[:start] + text + ("" if end < 0 else old[end + 1:])
        path.write_text(new)
    if stopped:
        sys.exit(1)


if __name__ == "__main__":
    main()

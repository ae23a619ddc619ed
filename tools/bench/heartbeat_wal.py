#!/usr/bin/env python3
"""etcd WAL bytes per heartbeat and per status change, on the real API
server (the apiextensions-apiserver and etcd 3.5 of tools/realapi,
docs/realapi.md), for the heartbeat as it is today (a merge patch of a
site's /status) and for the FederatedClusterLease renewal that replaces it
(issue 35, docs/benchmarks-heartbeat.md):

    python3 tools/bench/heartbeat_wal.py                  # 1,000 sites, 3 rounds
    python3 tools/bench/heartbeat_wal.py --write-section docs/benchmarks-heartbeat.md
    python3 tools/bench/heartbeat_wal.py --smoke          # tiny: does it still work?

Starts its own etcd and API server (tools/realapi/start.sh, loopback only,
in a temporary folder), applies deploy/crds, then fills it as production
would: N sites, each server-side applied as `kubectl fleet register` applies
it (field manager kubectl-fleet), given a full edge report (a JSON merge
patch of /status, sent as the edge sends it: no fieldManager and no
User-Agent, as kube-rs sends none) and the hub's judgement (a PUT of /status
with phase and conditions, likewise); and each site's FederatedClusterLease,
server-side applied as register creates it (an empty spec and the bucket label) and renewed
once. Then R rounds of each operation over every site, with a few writer
threads:

  heartbeat (today)  {"status":{"lastHeartbeatTime":T}} to the site's /status
  lease renewal      {"metadata":{"managedFields":[{}]},"spec":{"renewTime":T,
                     "lastRenewDurationMilliseconds":N}} to the site's lease
                     (k8s::site_lease::renew_site_lease: managedFields cleared)
  status change      one signal changed, with lastHeartbeatTime, to /status
                     (round 1: a signal appears; later rounds: it moves on)

and, unless --no-variants, R rounds of lease variants on leases of their
own (managedFields kept, as without the clearing; the lease labelled and
owned like the site's other objects; with no label; renewTime alone),
to tell what the bytes of a renewal are made of.

Each figure is a delta of etcd's own counters around the operation
(`etcd_disk_wal_write_bytes_total`, `etcd_mvcc_db_total_size_in_bytes`,
`etcd_server_proposals_committed_total`) divided by the writes made, with
the API server's `apiserver_request_total` confirming how many writes it
served; the stored value of one object of each kind is read from etcd
itself. Prints Markdown and BENCH-RESULT lines; --write-section FILE
replaces the "## Results" section of FILE. Bounded: --time-limit (default
300 s) ends the run, and every exit path (an error, Ctrl-C, SIGTERM, the
limit) stops the servers it started by their PIDs (tools/realapi/stop.sh;
a watcher stops them too if this process is killed) and removes its
temporary folder. Python 3 standard library only (and kubectl, to apply the
CRDs). Nothing here asserts a figure.
"""

import argparse
import base64
import datetime
import http.client
import hashlib
import json
import os
import platform
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse
from benchlib import (TimeLimit, bounded, kubeconfig_field, log, realapi_built, realapi_start, realapi_stop, rfc3339,
                      signal_obj, unbounded)

ROOT = Path(__file__).resolve().parents[2]
GROUP = "federation.kubectl-fleet.dev"
VERSION = "v1alpha1"
API = f"{GROUP}/{VERSION}"
SITES = f"/apis/{API}/federatedclusters"
LEASES = f"/apis/{API}/federatedclusterleases"
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"
SECTION = "## Results"
PREFIX = "BENCH-RESULT "
GOAL = 1600  # issue 35: ≤ 1,600 B of WAL per heartbeat
TODAY = 5482  # issue 35: today's heartbeat, measured the same way

TIERS = ["critical", "standard", "non-critical"]
ENVS = ["production", "staging", "development", "dr"]
REGIONS = ["eu-west-1", "us-east-1", "ap-south-1", "us-west-2"]


STOP = threading.Event()  # set when the run must end: writers stop at once


# --- the servers ---------------------------------------------------------------

class RealApi:
    """etcd and the apiextensions-apiserver, started by tools/realapi/start.sh
    in DIR and stopped by stop.sh (by the PIDs start.sh recorded). With
    REALAPI_WATCH_PID a watcher stops them too should this process die
    without running its cleanup (SIGKILL)."""

    def __init__(self, workdir):
        self.dir = workdir
        # Whatever start.sh manages to start is stopped by stop() from here on.
        self.started = True
        realapi_start(workdir)
        text = (workdir / "kubeconfig").read_text()
        self.kubeconfig = workdir / "kubeconfig"
        url = urlparse(kubeconfig_field(text, "server"))
        self.host, self.port = url.hostname, url.port
        if self.host not in ("127.0.0.1", "localhost", "::1"):
            raise RuntimeError(f"the API server is not on loopback: {url.geturl()}")
        ca = base64.b64decode(kubeconfig_field(text, "certificate-authority-data")).decode()
        self.ctx = ssl.create_default_context(cadata=ca)
        # In pki/, which stop.sh removes even when the watcher runs it.
        cert, key = workdir / "pki/bench-client.crt", workdir / "pki/bench-client.key"
        for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(base64.b64decode(kubeconfig_field(text, field)))
        self.ctx.load_cert_chain(cert, key)
        self.etcd = (workdir / "etcd-servers").read_text().strip()
        if urlparse(self.etcd).hostname != "127.0.0.1":
            raise RuntimeError(f"etcd is not on loopback: {self.etcd}")
        self.apiserver_pid = int((workdir / "apiserver.pid").read_text())
        self.etcd_pid = int((workdir / "etcd.pid").read_text())
        # The prefix start.sh chose for this server's keys in etcd.
        argv = Path(f"/proc/{self.apiserver_pid}/cmdline").read_bytes().split(b"\0")
        self.etcd_prefix = next((a.split(b"=", 1)[1].decode() for a in argv if a.startswith(b"--etcd-prefix=")),
                                "/registry")
        self.wal = WalFiles(workdir / "data/etcd/member/wal")

    def stop(self):
        if self.started:
            realapi_stop(self.dir)
            self.started = False

    def connection(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)

    def request(self, conn, method, path, body=None, content_type=None, user_agent=None):
        """One request on `conn`. http.client sends no User-Agent unless one
        is given here, as kube-rs sends none: the API server then names a
        write's field manager from the fieldManager parameter alone."""
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if user_agent:
            headers["User-Agent"] = user_agent
        if isinstance(body, (dict, list)):
            body = json.dumps(body, separators=(",", ":"))
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:400]!r}")
        return data

    def get_json(self, path):
        conn = self.connection()
        try:
            return json.loads(self.request(conn, "GET", path))
        finally:
            conn.close()

    def get_text(self, path):
        conn = self.connection()
        try:
            return self.request(conn, "GET", path, None).decode()
        finally:
            conn.close()

    def etcd_get(self, path):
        with urllib.request.urlopen(self.etcd + path, timeout=30) as r:
            return r.read().decode()

    def etcd_range(self, key, range_end=None, keys_only=False):
        body = {"key": base64.b64encode(key.encode()).decode(), "keys_only": keys_only}
        if range_end is not None:
            body["range_end"] = base64.b64encode(range_end.encode()).decode()
        req = urllib.request.Request(self.etcd + "/v3/kv/range", data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=30) as r:
            return [(base64.b64decode(kv["key"]).decode(), base64.b64decode(kv.get("value", "")))
                    for kv in json.loads(r.read()).get("kvs") or []]

    def stored_value(self, resource, name):
        """(key, value) lengths of one object in etcd: what each write of it
        puts. The key is looked up by its end: the standalone
        apiextensions-apiserver keeps custom resources under
        /registry/apiextensions.kubernetes.io/GROUP/..., kube-apiserver
        under /registry/GROUP/..."""
        suffix = f"/{GROUP}/{resource}/{name}"
        prefix = self.etcd_prefix
        keys = [k for k, _ in self.etcd_range(prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1), keys_only=True)
                if k.endswith(suffix)]
        if len(keys) != 1:
            raise RuntimeError(f"etcd holds {len(keys)} keys ending in {suffix}")
        value = self.etcd_range(keys[0])[0][1]
        return len(keys[0]), len(value)

    def wal_bytes(self):
        """Bytes etcd has appended to its WAL files so far, read from the
        files themselves (walking their records): the physical figure,
        beside the counter (see WalFiles)."""
        return self.wal.used()


class WalFiles:
    """The used length of etcd's WAL segment files. A segment is
    preallocated (64 MiB of zeros) and holds records framed as an 8-byte
    little-endian length (its top byte: 0x80 | padding) then the record and
    its padding to 8 bytes; a zero length is where the writing stops. The
    walk resumes where the last one ended."""

    def __init__(self, wal_dir):
        self.dir = wal_dir
        self.ends = {}

    def used(self):
        total = 0
        for path in sorted(self.dir.glob("*.wal")):
            end = self.ends.get(path.name, 0)
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                while end + 8 <= size:
                    f.seek(end)
                    field = int.from_bytes(f.read(8), "little")
                    if field == 0:
                        break
                    n = field & ((1 << 56) - 1)
                    pad = (field >> 56) & 0x7 if field >> 63 else 0
                    if end + 8 + n + pad > size:
                        break
                    end += 8 + n + pad
            self.ends[path.name] = end
            total += end
        return total


# --- metrics -----------------------------------------------------------------------

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def samples(text, name):
    """(labels, value) of every sample of metric `name` in Prometheus text."""
    out = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and m.group(1) == name:
            out.append((dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


COUNTER = "etcd_disk_wal_write_bytes_total"
ETCD_METRICS = ["etcd_disk_wal_write_bytes_total", "etcd_mvcc_db_total_size_in_bytes",
                "etcd_server_proposals_committed_total", "etcd_mvcc_put_total"]


def snapshot(api):
    """etcd's counters and the API server's write counts, now."""
    etcd = api.etcd_get("/metrics")
    snap = {m: sum(v for _, v in samples(etcd, m)) for m in ETCD_METRICS}
    snap["wal_file_bytes"] = api.wal_bytes()
    writes = {}
    for labels, v in samples(api.get_text("/metrics"), "apiserver_request_total"):
        if labels.get("group") == GROUP and labels.get("verb") in ("PATCH", "PUT", "POST", "APPLY") \
                and labels.get("code", "").startswith("2"):
            key = (labels.get("resource"), labels.get("subresource", ""), labels["verb"])
            writes[key] = writes.get(key, 0) + v
    snap["writes"] = writes
    return snap


def delta(before, after):
    d = {m: after[m] - before[m] for m in ETCD_METRICS + ["wal_file_bytes"]}
    d["api_writes"] = sum(after["writes"].values()) - sum(before["writes"].values())
    return d


# --- what the edge, register and the hub write ----------------------------------------

def site_spec(name, i):
    """The site as `kubectl fleet register` server-side applies it."""
    region = REGIONS[i % 4]
    return {
        "apiVersion": API, "kind": "FederatedCluster",
        "metadata": {"name": name, "labels": {
            "app.kubernetes.io/managed-by": "kubectl-fleet",
            f"{GROUP}/site": name,
            f"{GROUP}/environment": ENVS[i % 4],
            f"{GROUP}/tier": TIERS[i % 3],
            f"{GROUP}/bucket": str((i * 97) % 256),
            f"{GROUP}/region": region,
        }},
        "spec": {
            "mode": "Push", "region": region, "environment": ENVS[i % 4], "tier": TIERS[i % 3],
            "capabilities": ["monitoring"], "heartbeatIntervalSeconds": 30, "maxConcurrentRemediations": 3,
        },
    }


def base_signals(i, now):
    """A site's standing signals: one site in five has a crash loop, one in
    twenty-five a node down too."""
    out = []
    if i % 25 == 0:
        out.append(signal_obj("NodeNotReady", "critical", "", "Node", f"node-{i % 3}", None,
                              now - 300, now - 20, 3))
    if i % 5 == 0:
        out.append(signal_obj("CrashLoopBackOff", "high", "inference", "Deployment", "llm-server",
                              "back-off 5m0s restarting failed container llm-server", now - 600, now - 20, 7))
    return out


def member_uid(i):
    return f"{i:08x}-5a1e-4c3b-9d2f-{(i * 7919) % 16**12:012x}"


def edge_report(i, now):
    """A full edge report (every edge-owned key), as the edge's first
    patch after it starts sends it (operator::collect::edge_status)."""
    nodes = 3 + i % 5
    gpus = 8 if i % 2 == 0 else 0
    status = {
        "lastHeartbeatTime": rfc3339(now),
        "observedVersion": "0.1.0",
        "kubernetesVersion": "v1.33.2",
        "nodeCount": nodes,
        "namespaceCount": 12 + i % 9,
        "capacity": {"nodes": nodes, "gpusTotal": gpus, "gpusAllocatable": gpus - (i % 3 if gpus else 0)},
        "inference": {"models": 1, "servicesReady": 2, "servicesFailed": 0, "servicesTotal": 2},
        "signals": base_signals(i, now),
        "credentialExpirationTime": rfc3339(now + 90 * 86400),
        "credentialRenewalTime": rfc3339(now + 45 * 86400),
        "lastReportDurationMilliseconds": 50,
        "member": member_uid(i),
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


def hub_judgement(site, now):
    """The site with the hub's keys set, as its judgement writes them: the
    whole object with its resourceVersion, PUT to /status."""
    site = dict(site)
    site["metadata"] = {k: v for k, v in site["metadata"].items() if k != "managedFields"}
    status = dict(site.get("status") or {})
    status["phase"] = "Connected"
    status["phaseTransitionTime"] = rfc3339(now)
    status["conditions"] = [{
        "type": "Connected", "status": "True", "reason": "HeartbeatReceived",
        "message": "heartbeat received within 1m30s (3 intervals)",
        "lastTransitionTime": rfc3339(now), "observedGeneration": 1,
    }]
    site["status"] = status
    return site


def lease_apply(name, uid="00000000-0000-4000-8000-000000000000", shape="register"):
    """The lease as `kubectl fleet register` creates it (manifests::rbac::site_lease):
    an empty spec and the site's bucket label, nothing more. shape="owned": as
    the site's other objects are made (their labels and the site as owner, `uid`);
    shape="bare": no label at all."""
    bucket = str(hashlib.sha256(name.encode()).digest()[0])
    meta = {"name": name}
    if shape == "owned":
        meta["labels"] = {"app.kubernetes.io/managed-by": "kubectl-fleet",
                          f"{GROUP}/site": name, f"{GROUP}/bucket": bucket}
        meta["ownerReferences"] = [{"apiVersion": API, "kind": "FederatedCluster", "name": name,
                                    "uid": uid}]
    elif shape == "register":
        meta["labels"] = {f"{GROUP}/bucket": bucket}
    return {"apiVersion": API, "kind": "FederatedClusterLease", "metadata": meta, "spec": {}}


def renewal(t, ms, clear=True):
    """The edge's renewal (k8s::site_lease::renew_site_lease): the spec, and
    managedFields cleared (clear=False: the renewal without that)."""
    spec = {"renewTime": rfc3339(t)}
    if ms is not None:
        spec["lastRenewDurationMilliseconds"] = ms
    if clear:
        return {"metadata": {"managedFields": [{}]}, "spec": spec}
    return {"spec": spec}


# --- writers ---------------------------------------------------------------------------

def in_threads(api, items, work, workers):
    """Runs work(conn, item) for every item on `workers` threads, each with
    its own connection; stops early when STOP is set. The first error any
    writer met is raised. The main thread waits in short slices so a signal
    or the time limit reaches it at once."""
    errors = []
    lock = threading.Lock()
    it = iter(items)

    def loop():
        conn = api.connection()
        try:
            while not STOP.is_set() and not errors:
                with lock:
                    item = next(it, None)
                if item is None:
                    return
                work(conn, item)
        except Exception as e:  # surfaced below
            errors.append(e)
        finally:
            conn.close()

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        while th.is_alive():
            th.join(0.2)
    if errors:
        raise errors[0]
    if STOP.is_set():
        raise TimeLimit("stopped")


# --- the run -------------------------------------------------------------------------------

class Bench:
    def __init__(self, api, args):
        self.api = api
        self.args = args
        self.names = [f"site-{i:05d}" for i in range(args.sites)]
        self.rows = []  # (operation, writes, delta, note)
        self.clock = time.time()  # the simulated edge clock, moved 30 s per round

    def seed(self):
        now = time.time()
        w = self.args.workers

        def site(conn, i):
            name = self.names[i]
            path = f"{SITES}/{name}"
            self.api.request(conn, "PATCH", path + "?fieldManager=kubectl-fleet&force=true",
                             site_spec(name, i), APPLY)
            obj = json.loads(self.api.request(conn, "PATCH", path + "/status", edge_report(i, now - 60), MERGE))
            self.api.request(conn, "PUT", path + "/status", hub_judgement(obj, now - 60), "application/json")
            lpath = f"{LEASES}/{name}"
            self.api.request(conn, "PATCH", lpath + "?fieldManager=kubectl-fleet&force=true",
                             lease_apply(name), APPLY)
            self.api.request(conn, "PATCH", lpath, renewal(now - 30, 40), MERGE)

        t = time.monotonic()
        in_threads(self.api, range(len(self.names)), site, w)
        log(f"seeded {len(self.names)} sites and leases in {time.monotonic() - t:.1f}s")

    def measure(self, label, items, work, note=""):
        """R rounds of work(conn, item, round) over items; one row per
        round and their total."""
        total = None
        writes = 0
        for r in range(self.args.rounds):
            self.clock += 30
            before = snapshot(self.api)
            t = time.monotonic()
            in_threads(self.api, items, lambda conn, item: work(conn, item, r), self.args.workers)
            took = time.monotonic() - t
            time.sleep(0.2)  # the last commit's HardState record
            after = snapshot(self.api)
            d = delta(before, after)
            d["seconds"] = took
            log(f"{label}, round {r + 1}: {len(items)} writes in {took:.1f}s, "
                f"{d[COUNTER] / len(items):,.0f} B of WAL counted, {d['wal_file_bytes'] / len(items):,.0f} B "
                "appended each")
            self.rows.append((f"{label}, round {r + 1}", len(items), d, note))
            total = d if total is None else {k: total[k] + d[k] for k in d}
            writes += len(items)
        self.rows.append((label, writes, total, note))
        return total, writes

    def heartbeats(self):
        def work(conn, i, r):
            self.api.request(conn, "PATCH", f"{SITES}/{self.names[i]}/status",
                             {"status": {"lastHeartbeatTime": rfc3339(self.clock)}}, MERGE)
        return self.measure("heartbeat today: merge patch of the site's /status", range(len(self.names)), work)

    def renewals(self, names, make, content_type=MERGE, query=""):
        def work(conn, i, r):
            self.api.request(conn, "PATCH", f"{LEASES}/{names[i]}{query}", make(i, r), content_type)
        return work

    def status_changes(self):
        now = self.clock

        def work(conn, i, r):
            # A signal that appears in round 1 and moves on after (its
            # lastSeen and count, as the edge's 5-minute refresh of a
            # standing failure sends it): the whole list is sent, as a
            # merge patch replaces a list whole.
            sigs = base_signals(i, now - 3600) + [signal_obj(
                "OOMKilled", "high", "inference", "Deployment", "llm-server",
                "container llm-server was OOMKilled", now - 600, self.clock, 1 + r)]
            self.api.request(conn, "PATCH", f"{SITES}/{self.names[i]}/status",
                             {"status": {"signals": sigs, "lastHeartbeatTime": rfc3339(self.clock)}}, MERGE)
        return self.measure("status change: one signal and lastHeartbeatTime, to /status",
                            range(len(self.names)), work)

    def lease_variant(self, tag, label, create, renew_body, content_type=MERGE, query="", note=""):
        """Leases of their own (names as long as the sites'), created by
        `create`, renewed once, then measured."""
        n = min(self.args.variant_sites, len(self.names))
        names = [f"{tag}-{i:0{9 - len(tag)}d}" for i in range(n)]
        assert all(len(x) == len(self.names[0]) for x in names)

        def setup(conn, i):
            create(conn, names[i])
            self.api.request(conn, "PATCH", f"{LEASES}/{names[i]}{query}",
                             renew_body(names[i], i, -1, self.clock - 30), content_type)
        in_threads(self.api, range(n), setup, self.args.workers)
        work = self.renewals(names, lambda i, r: renew_body(names[i], i, r, self.clock), content_type, query)
        self.measure(label, range(n), work, note)
        return label, names


def create_by_apply(api, shape="register"):
    return lambda conn, name: api.request(conn, "PATCH", f"{LEASES}/{name}?fieldManager=kubectl-fleet&force=true",
                                          lease_apply(name, shape=shape), APPLY)


def duration_ms(i, r):
    return 20 + (i * 7 + r * 13) % 60


def sample(api, label, resource, names):
    """What the objects `names` of `resource` are now: one of them (the
    second: a site without signals) as served, its managedFields, and the
    mean length of their values in etcd (each write puts the whole value)."""
    obj = api.get_json(f"/apis/{API}/{resource}/{names[min(1, len(names) - 1)]}")
    key_len, _ = api.stored_value(resource, names[0])
    wanted = {f"/{GROUP}/{resource}/{n}" for n in names}
    lens = [len(v) for k, v in api.etcd_range(api.etcd_prefix, api.etcd_prefix[:-1] + chr(ord(api.etcd_prefix[-1]) + 1))
            if k[k.find(f"/{GROUP}/"):] in wanted]
    return {"label": label, "served": len(json.dumps(obj, separators=(",", ":"))),
            "managed": len(json.dumps(obj["metadata"]["managedFields"], separators=(",", ":")))
            if obj["metadata"].get("managedFields") else 0,
            "entries": [(e.get("manager"), e.get("operation"), e.get("subresource", ""))
                        for e in obj["metadata"].get("managedFields") or []],
            "key": key_len, "value": sum(lens) / max(1, len(lens)), "objects": len(lens), "example": obj}


def versions(api):
    v = api.get_json("/version")
    etcd_server = json.loads(api.etcd_get("/version"))
    etcd_bin = Path(os.environ.get("REALAPI_BIN_DIR") or
                    Path(os.environ.get("REALAPI_CACHE") or Path.home() / ".cache/kubectl-fleet-realapi") / "bin") / "etcd"
    etcd_version = subprocess.run([str(etcd_bin), "--version"], capture_output=True, text=True).stdout.strip()
    return v, etcd_server, etcd_version


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sites", type=int, default=1000, help="sites (and leases) to create and write (default 1000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each operation over every site (default 3)")
    ap.add_argument("--workers", type=int, default=4, help="concurrent writers (default 4)")
    ap.add_argument("--variant-sites", type=int, default=300,
                    help="leases per lease variant (default 300; at most --sites)")
    ap.add_argument("--no-variants", action="store_true", help="measure the three operations only")
    ap.add_argument("--time-limit", type=float, default=300, help="seconds the whole run may take (default 300)")
    ap.add_argument("--write-section", metavar="FILE", help=f"replace the '{SECTION}' section of FILE")
    ap.add_argument("--smoke", action="store_true", help="20 sites, 2 rounds: does the harness still work?")
    args = ap.parse_args()
    if args.smoke:
        args.sites, args.rounds, args.variant_sites = 20, 2, 20
    if args.sites < 1 or args.rounds < 1 or args.workers < 1 or args.variant_sites < 1 or args.time_limit <= 0:
        sys.exit("heartbeat_wal: --sites, --rounds, --workers, --variant-sites and --time-limit must be positive")
    if args.sites > 99999:
        sys.exit("heartbeat_wal: --sites is at most 99,999 (names are site-NNNNN)")
    if realapi_built() is not None:
        sys.exit("heartbeat_wal: the real API server is not built for this work tree: run tools/realapi/build.sh")
    if shutil.which("kubectl") is None:
        sys.exit("heartbeat_wal: kubectl not found (it applies deploy/crds)")

    bounded("heartbeat_wal", args.time_limit, STOP)

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="fleet-heartbeat-wal-"))
    api = None
    t0 = time.monotonic()
    try:
        api = RealApi(work / "realapi")
        server_version, etcd_server, etcd_version = versions(api)
        subprocess.run(["kubectl", "--kubeconfig", str(api.kubeconfig), "apply", "--server-side",
                        "-f", str(ROOT / "deploy/crds")], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["kubectl", "--kubeconfig", str(api.kubeconfig), "wait", "--for=condition=Established",
                        "--timeout=60s", f"crd/federatedclusters.{GROUP}", f"crd/federatedclusterleases.{GROUP}"],
                       check=True, stdout=subprocess.DEVNULL)
        for _ in range(300):  # served: discovery names both resources
            served = {r["name"] for r in api.get_json(f"/apis/{API}").get("resources", [])}
            if {"federatedclusters/status", "federatedclusterleases"} <= served:
                break
            time.sleep(0.1)
        bench = Bench(api, args)
        bench.seed()

        idle_before = snapshot(api)
        time.sleep(5)
        idle = delta(idle_before, snapshot(api))

        hb, hb_n = bench.heartbeats()
        sizes = [sample(api, "site, as the heartbeats found it", "federatedclusters", bench.names)]
        lease_work = bench.renewals(bench.names, lambda i, r: renewal(bench.clock, duration_ms(i, r)))
        ls, ls_n = bench.measure("lease renewal: merge patch of the lease's spec (renewTime, "
                                 "lastRenewDurationMilliseconds), clearing managedFields",
                                 range(len(bench.names)), lease_work)
        sizes.append(sample(api, "lease, renewed as the edge renews it", "federatedclusterleases", bench.names))
        sc, sc_n = bench.status_changes()
        sizes.append(sample(api, "site, after the status changes (one more signal)", "federatedclusters",
                            bench.names))

        variants = []
        if not args.no_variants:
            ms = duration_ms
            variants.append(bench.lease_variant(
                "lk", "lease variant: managedFields kept", create_by_apply(api),
                lambda name, i, r, t: renewal(t, ms(i, r), clear=False)))
            variants.append(bench.lease_variant(
                "lo", "lease variant: labelled and owned like the site's other objects", create_by_apply(api, "owned"),
                lambda name, i, r, t: renewal(t, ms(i, r))))
            variants.append(bench.lease_variant(
                "ln", "lease variant: no label", create_by_apply(api, "bare"),
                lambda name, i, r, t: renewal(t, ms(i, r))))
            variants.append(bench.lease_variant(
                "lr", "lease variant: no label, renewTime only", create_by_apply(api, "bare"),
                lambda name, i, r, t: renewal(t, None)))
            variants.append(bench.lease_variant(
                "lq", "lease variant: no label, managedFields kept", create_by_apply(api, "bare"),
                lambda name, i, r, t: renewal(t, ms(i, r), clear=False)))
            for label, names in variants:
                sizes.append(sample(api, label.replace("lease variant: ", "lease, "), "federatedclusterleases",
                                    names))
        elapsed = time.monotonic() - t0
    finally:
        unbounded()
        STOP.set()
        if api is not None:
            api.stop()
        shutil.rmtree(work, ignore_errors=True)

    report(args, started, load, elapsed, server_version, etcd_server, etcd_version, idle, bench, sizes, hb, hb_n, ls, ls_n, sc, sc_n)


def report(args, started, load, elapsed, server_version, etcd_server, etcd_version, idle, bench, sizes,
           hb, hb_n, ls, ls_n, sc, sc_n):
    results = []

    def result(measure, value, unit, target=""):
        results.append({"goal": "heartbeat WAL", "measure": measure, "value": value, "unit": unit,
                        "target": target})

    def per(d, n, k=COUNTER):
        return round(d[k] / n)

    result("heartbeat today: etcd_disk_wal_write_bytes_total per heartbeat", per(hb, hb_n), "B")
    result("lease renewal: etcd_disk_wal_write_bytes_total per renewal", per(ls, ls_n), "B", f"≤ {GOAL:,} B")
    result("status change: etcd_disk_wal_write_bytes_total per change", per(sc, sc_n), "B")
    result("heartbeat today: WAL file bytes per heartbeat", per(hb, hb_n, "wal_file_bytes"), "B")
    result("lease renewal: WAL file bytes per renewal", per(ls, ls_n, "wal_file_bytes"), "B")
    result("status change: WAL file bytes per change", per(sc, sc_n, "wal_file_bytes"), "B")
    ratio = round(hb[COUNTER] / hb_n / (ls[COUNTER] / ls_n), 2)
    result("heartbeat today / lease renewal (WAL)", ratio, "×")

    cmd = "python3 tools/bench/heartbeat_wal.py " + " ".join(sys.argv[1:])
    lines = [
        SECTION, "",
        f"Run of {started}; {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average at "
        f"start {load:.2f}; {args.sites:,} sites, {args.rounds} rounds, {args.workers} writers; whole run "
        f"{elapsed:.0f} s.", "",
        f"Servers: API server `{server_version.get('gitVersion')}` ({server_version.get('goVersion')}, "
        f"{server_version.get('platform')}), the apiextensions-apiserver of tools/realapi; etcd server "
        f"`{etcd_server.get('etcdserver')}` (cluster `{etcd_server.get('etcdcluster')}`); "
        f"`etcd --version`: {' · '.join(etcd_version.splitlines())}.", "",
        f"Command: `{cmd.strip()}`", "",
        f"Idle, before the measured writes: {idle[COUNTER]:,.0f} B of WAL counted, {idle['wal_file_bytes']:,.0f} B "
        f"appended and {idle['etcd_server_proposals_committed_total']:,.0f} proposals in 5 s (the figures "
        "below are not corrected for background writes).", "",
        "`counter` is `etcd_disk_wal_write_bytes_total`, the metric of the goal (etcd 3.5 counts each WAL "
        "record twice: when it is buffered and when the buffer is flushed; fixed in 3.6 by etcd PR #14506); "
        "`file` is what was appended to the WAL segment files, read from the files. DB growth is "
        "`etcd_mvcc_db_total_size_in_bytes` (bbolt grows by pages: coarse).", "",
        "| operation | writes (API server) | etcd proposals | WAL B per write (counter) | WAL B per write (file) "
        "| DB growth B per write | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, n, d, _ in bench.rows:
        bold = "" if ", round " in label else "**"
        lines.append(f"| {bold}{label}{bold} | {d['api_writes']:,.0f} of {n:,} | "
                     f"{d['etcd_server_proposals_committed_total']:,.0f} | "
                     f"{bold}{d[COUNTER] / n:,.0f}{bold} | {d['wal_file_bytes'] / n:,.0f} | "
                     f"{d['etcd_mvcc_db_total_size_in_bytes'] / n:,.0f} | {d['seconds']:.1f} |")
    lines += ["", "| object | objects | etcd value, mean | etcd key | one as served (JSON) | its managedFields "
                  "| their writers (manager, operation, subresource) |",
              "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for z in sizes:
        writers = "; ".join(f"{m or '-'} {o}{' ' + sub if sub else ''}" for m, o, sub in z["entries"]) or "none"
        lines.append(f"| {z['label']} | {z['objects']:,} | {z['value']:,.0f} B | {z['key']} B | {z['served']:,} B "
                     f"| {z['managed']:,} B | {writers} |")
    lines += ["", f"Heartbeat today / lease renewal: **{ratio}×** in WAL bytes. Goal ≤ {GOAL:,} B "
                  f"(`etcd_disk_wal_write_bytes_total`) per heartbeat; today's heartbeat measured the same way "
                  f"in issue 35: {TODAY:,} B.", ""]
    text = "\n".join(lines) + "\n"
    for r in results:
        print(PREFIX + json.dumps(r, ensure_ascii=False))
    print(text)
    if args.write_section:
        path = Path(args.write_section)
        old = path.read_text() if path.exists() else ""
        start = old.find(SECTION)
        if start < 0:
            new = old.rstrip("\n") + ("\n\n" if old else "") + text
        else:
            end = old.find("\n## ", start + len(SECTION))
            new = old[:start] + text + ("" if end < 0 else old[end:])
        path.write_text(new)


if __name__ == "__main__":
    try:
        main()
    except TimeLimit as e:
        sys.exit(f"heartbeat_wal: {e}; the servers were stopped and nothing was reported")

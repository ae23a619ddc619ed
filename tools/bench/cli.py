#!/usr/bin/env python3
"""The scale benchmarks P1-P6 in release builds, side by side in one run.

    python3 tools/bench/cli.py                      # everything: 5,000 / 10,000 / 20,000 sites
    python3 tools/bench/cli.py --sizes 5000 --write BENCHMARKS.md
    python3 tools/bench/cli.py --skip-operator      # without P3/P5 (the long part)
    python3 tools/bench/cli.py --servers sandbox    # P1 against kube-sandbox only
    python3 tools/bench/cli.py --smoke              # tiny run: does the harness still work?

Builds the release binaries (`cargo build --release --workspace --bins
--examples`, and the operator_bench test), then:

P1/P1b  on each API server -- a release `kube-sandbox serve` and, when
        tools/realapi has built it (docs/realapi.md), the real
        apiextensions-apiserver with etcd -- installs the CRDs with
        `kubectl-fleet install --crds-only --apply`, fills the server with
        FederatedClusters carrying edge-like status (server-side applied
        spec as `register` does, one status merge patch as an edge and the
        hub together would leave it) and measures, interleaved and repeated:
          curl GET of the list | kubectl get fc -o json | kubectl get fc
          kubectl-fleet status -o json | kubectl-fleet status
        wall time (monotonic clock around the process), CPU (utime + stime)
        and peak RSS (GNU time's %M, see measure()) of each process.
P1w     (no goal set) `status --watch` (table and -o json) beside
        `kubectl get fc --watch` on kube-sandbox at the smallest size: CPU
        and peak RSS of each, run side by side, while heartbeat patches
        arrive as from every site every 30 s (60 s of them).
P2      `--help` start time (median of 30, spawn to exit, beside /bin/true
        as the machine's floor) and the size of each binary.
P4      `cargo run --release --example correlation_bench`, and
        `cargo run --release --example factors_bench` (what each incident's
        sites have in common, over 10,000 and 100,000 sites).
P6      the `cli_register` test `register_round_trips`, which counts
        register's requests in kube-sandbox's request log.
P3/P5   `cargo test --release --test integration operator_bench:: -- --ignored
        --nocapture --test-threads 1`, whose benchmarks print lines
        `BENCH-RESULT {"goal": ..., "measure": ..., "value": ..., "unit":
        ..., "target": ...}`.

Every figure of this harness is emitted in that same BENCH-RESULT form and
the goal table is built from those lines alone, the operator's and ours by
one code path (parse_bench_lines). Output is Markdown (stdout, or --write
FILE with the header BENCHMARKS.md carries). Python 3 standard library only.
Nothing here asserts timings: "met" in the table compares one run's figure
with its target.
"""

import argparse
import base64
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client
from pathlib import Path
from urllib.parse import urlparse
from benchlib import kubeconfig_field, log, private_file, rfc3339

ROOT = Path(__file__).resolve().parents[2]
GROUP = "federation.kubectl-fleet.dev"
LIST_PATH = f"/apis/{GROUP}/v1alpha1/federatedclusters"
TIERS = ["critical", "standard", "non-critical"]
ENVS = ["production", "staging", "development", "dr"]
REGIONS = ["eu-west-1", "us-east-1", "ap-south-1", "us-west-2"]
MIB = 1024 * 1024
TIME = "/usr/bin/time"  # GNU time, for peak RSS (see measure)
PREFIX = "BENCH-RESULT "
GOAL_ORDER = ["P1", "P1b", "P2", "P3", "P4", "P5", "P6"]
OPERATOR_CMD = ["cargo", "test", "--release", "--test", "integration", "operator_bench::", "--",
                "--ignored", "--nocapture", "--test-threads", "1"]


def run_checked(argv, **kw):
    log("$ " + " ".join(str(a) for a in argv))
    return subprocess.run(argv, check=True, **kw)


# --- BENCH-RESULT records: one form for every figure ------------------------

class Results:
    """Collects this harness's figures as BENCH-RESULT lines (the form
    tests/operator_bench.rs prints), so the table is built from lines only."""

    def __init__(self):
        self.lines = []

    def emit(self, goal, measure, value, unit, target=""):
        rec = {"goal": goal, "measure": measure, "value": value, "unit": unit, "target": target}
        line = PREFIX + json.dumps(rec, ensure_ascii=False)
        log(line)
        self.lines.append(line)


def parse_bench_lines(text):
    """(records, rejected) from any text holding BENCH-RESULT lines.

    A line counts from the marker on (test harness noise before it is
    fine) and its JSON object may be followed by other text. A record needs
    string `goal` and `measure` and a finite number `value`; `unit` and
    `target` default to "". Anything else is counted as rejected, never
    guessed at."""
    records, rejected = [], 0
    decoder = json.JSONDecoder()
    for line in text.splitlines():
        at = line.find(PREFIX)
        if at < 0:
            continue
        payload = line[at + len(PREFIX):].strip()
        try:
            rec, _ = decoder.raw_decode(payload)
        except ValueError:
            rejected += 1
            continue
        value = rec.get("value") if isinstance(rec, dict) else None
        if (not isinstance(rec, dict) or not isinstance(rec.get("goal"), str)
                or not isinstance(rec.get("measure"), str)
                or isinstance(value, bool) or not isinstance(value, (int, float))
                or value != value or value in (float("inf"), float("-inf"))):
            rejected += 1
            continue
        records.append({
            "goal": rec["goal"].strip(), "measure": rec["measure"].strip(), "value": value,
            "unit": str(rec.get("unit") or ""), "target": str(rec.get("target") or ""),
        })
    return records, rejected


TARGET_RE = re.compile(r"^\s*(≤|<=|<|≥|>=|>|==|=|exactly)\s*([0-9][0-9,_]*(?:\.[0-9]+)?)")


def judge(value, target):
    """'met', 'not met', or '' when the target is not a plain comparison
    with a number at its start (e.g. '≤ 5 ms', '<= 0.25', 'exactly 1')."""
    m = TARGET_RE.match(target)
    if not m:
        return ""
    op, num = m.group(1), float(m.group(2).replace(",", "").replace("_", ""))
    ok = {"≤": value <= num, "<=": value <= num, "<": value < num, "≥": value >= num,
          ">=": value >= num, ">": value > num, "==": value == num, "=": value == num,
          "exactly": value == num}[op]
    return "met" if ok else "**not met**"


def fmt_value(v):
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 100:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def md_escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


def goal_table(records):
    key = {g: i for i, g in enumerate(GOAL_ORDER)}
    rows = sorted(enumerate(records), key=lambda ir: (key.get(ir[1]["goal"], len(key)), ir[0]))
    out = ["| goal | measure | value | unit | target | |", "| --- | --- | ---: | --- | --- | --- |"]
    for _, r in rows:
        out.append(f"| {md_escape(r['goal'])} | {md_escape(r['measure'])} | {fmt_value(r['value'])} "
                   f"| {md_escape(r['unit'])} | {md_escape(r['target'])} | {judge(r['value'], r['target'])} |")
    return "\n".join(out)


def self_test():
    """Checks the parser and the judge on hand-made lines (no servers)."""
    text = "\n".join([
        'test hub ... BENCH-RESULT {"goal":"P3","measure":"hub CPU","value":3.2,"unit":"% of a core","target":"≤ 5%"}',
        'BENCH-RESULT {"goal":"P5","measure":"patch","value":55,"unit":"B","target":"<= 300 B"} ok',
        'BENCH-RESULT {"goal":"P3","measure":"writes per transition","value":1,"target":"exactly 1"}',
        'BENCH-RESULT {"goal":"P3","measure":"stale p99","value":"late"}',
        'BENCH-RESULT {"goal":"P3","value":1}',
        'BENCH-RESULT {"goal":"P3","measure":"x","value":NaN}',
        'BENCH-RESULT {"goal":"P3","measure":"x","value":true}',
        'BENCH-RESULT {not json',
        'some other line',
    ])
    records, rejected = parse_bench_lines(text)
    assert [r["measure"] for r in records] == ["hub CPU", "patch", "writes per transition"], records
    assert rejected == 5, rejected
    assert records[2]["unit"] == "" and records[0]["unit"] == "% of a core"
    assert judge(3.2, "≤ 5%") == "met" and judge(6, "≤ 5 ms") == "**not met**"
    assert judge(1, "exactly 1") == "met" and judge(2, "exactly 1") == "**not met**"
    assert judge(0.3, "<= 0.25× kubectl") == "**not met**" and judge(1, "flat") == ""
    assert judge(1200, "≤ 1,500") == "met"
    table = goal_table(records + [{"goal": "P1", "measure": "a|b", "value": 1.5, "unit": "×", "target": "≤ 1.5"}])
    assert table.splitlines()[2].startswith("| P1 | a\\|b | 1.50 |"), table
    print("self-test ok")


# --- API servers -------------------------------------------------------------

class Server:
    """An API server under test and what it takes to talk to it: the admin
    kubeconfig, and the same credentials for curl and for seeding."""

    def _load(self, kubeconfig):
        self.kubeconfig = kubeconfig
        text = kubeconfig.read_text()
        self.server = kubeconfig_field(text, "server")
        ca = base64.b64decode(kubeconfig_field(text, "certificate-authority-data"))
        self.ca_file = self.dir / "ca.pem"
        self.ca_file.write_bytes(ca)
        self._ctx = ssl.create_default_context(cadata=ca.decode())
        self._headers = {"Accept": "application/json"}
        token = kubeconfig_field(text, "token")
        if token:
            # curl reads the header from a file, so the token is never in argv.
            header_file = self.dir / "auth.header"
            private_file(header_file, f"Authorization: Bearer {token}\n".encode())
            self.curl_auth = ["-H", f"@{header_file}"]
            self._headers["Authorization"] = f"Bearer {token}"
        else:
            cert, key = self.dir / "client.crt", self.dir / "client.key"
            private_file(cert, base64.b64decode(kubeconfig_field(text, "client-certificate-data")))
            private_file(key, base64.b64decode(kubeconfig_field(text, "client-key-data")))
            self.curl_auth = ["--cert", str(cert), "--key", str(key)]
            self._ctx.load_cert_chain(cert, key)
        url = urlparse(self.server)
        self.host, self.port = url.hostname, url.port

    def connection(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self._ctx, timeout=120)

    def request(self, conn, method, path, body=None, content_type=None):
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()

    def curl(self, *extra):
        return ["curl", "-sS", "--fail", "--cacert", str(self.ca_file), *self.curl_auth, *extra]


class Sandbox(Server):
    """A release kube-sandbox process."""
    name = "kube-sandbox"

    def __init__(self, binary, workdir):
        self.dir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        kubeconfig = workdir / "admin.kubeconfig"
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--kubeconfig", str(kubeconfig)],
            stdout=subprocess.DEVNULL,
            stderr=open(workdir / "sandbox.log", "wb"),
        )
        deadline = time.monotonic() + 60
        while not kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("kube-sandbox did not start; see sandbox.log")
            time.sleep(0.05)
        self._load(kubeconfig)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def realapi_available():
    """Whether tools/realapi/build.sh built this work tree's server."""
    return subprocess.run(["bash", str(ROOT / "tools/realapi/start.sh"), "--check"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


class RealApi(Server):
    """The real apiextensions-apiserver and etcd that tools/realapi built,
    started by tools/realapi/start.sh (stopped with this process even if it
    dies: REALAPI_WATCH_PID)."""
    name = "real apiserver"

    def __init__(self, workdir):
        self.dir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        run_checked(["bash", str(ROOT / "tools/realapi/start.sh"), str(workdir)],
                    env=dict(os.environ, REALAPI_WATCH_PID=str(os.getpid())))
        self._load(workdir / "kubeconfig")

    def stop(self):
        subprocess.run(["bash", str(ROOT / "tools/realapi/stop.sh"), str(self.dir)], check=False)


def site_objects(i, now):
    """The spec apply and the status merge patch of site number i."""
    name = f"site-{i:05d}"
    spec = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "FederatedCluster",
        "metadata": {
            "name": name,
            "labels": {"fleet.kubectl-fleet.dev/site": name, "team": f"team-{i % 7}"},
        },
        "spec": {
            "mode": "Push",
            "tier": TIERS[i % 3],
            "environment": ENVS[i % 4],
            "region": REGIONS[i % 4],
            "heartbeatIntervalSeconds": 30,
        },
    }
    phase = "Connected" if i % 10 else "Stale"
    signals = []
    if i % 5 == 0:
        signals.append({
            "type": "CrashLoopBackOff", "severity": "high", "namespace": "inference",
            "workload": {"kind": "Deployment", "name": "llm-server"},
            "message": "back-off 5m0s restarting failed container",
            "firstSeen": rfc3339(now - 600), "lastSeen": rfc3339(now - 20), "count": 7,
        })
    if i % 25 == 0:
        signals.append({
            "type": "NodeNotReady", "severity": "critical", "namespace": "",
            "workload": {"kind": "Node", "name": f"node-{i % 3}"},
            "firstSeen": rfc3339(now - 300), "lastSeen": rfc3339(now - 20), "count": 3,
        })
    status = {
        "phase": phase,
        "phaseTransitionTime": rfc3339(now - 3600),
        "conditions": [{
            "type": "Ready", "status": "True" if phase == "Connected" else "False",
            "reason": "HeartbeatFresh" if phase == "Connected" else "HeartbeatLate",
            "message": "last heartbeat within 3 intervals",
            "lastTransitionTime": rfc3339(now - 3600), "observedGeneration": 1,
        }],
        "lastHeartbeatTime": rfc3339(now - (i % 30) - (0 if phase == "Connected" else 200)),
        "observedVersion": "0.1.0",
        "kubernetesVersion": "v1.33.2",
        "nodeCount": 3 + i % 5,
        "namespaceCount": 12 + i % 9,
        "capacity": {
            "nodes": 3 + i % 5, "gpusTotal": 8, "gpusAllocatable": 6,
            "gpusByVendor": {"nvidia.com/gpu": {"total": 8, "allocatable": 6}},
        },
        "inference": {"models": 1, "servicesReady": 2, "servicesFailed": i % 2, "servicesTotal": 2 + i % 2},
        "signals": signals,
        "credentialExpirationTime": rfc3339(now + 30 * 86400),
    }
    return name, json.dumps(spec), json.dumps({"status": status})


def in_threads(work, workers):
    """Runs work(k) for k in 0..workers on as many threads; raises the
    first error any of them met."""
    errors = []

    def guarded(k):
        try:
            work(k)
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def seed(sb, start, end, workers=4):
    """Creates sites start..end (exclusive), as `register` then the edge would."""
    now = time.time()

    def work(k):
        conn = sb.connection()
        try:
            for i in range(start + k, end, workers):
                name, spec, status = site_objects(i, now)
                path = f"{LIST_PATH}/{name}"
                code, body = sb.request(conn, "PATCH", path + "?fieldManager=kubectl-fleet&force=true",
                                        spec, "application/apply-patch+yaml")
                if code >= 300:
                    raise RuntimeError(f"apply {name}: {code} {body[:300]!r}")
                code, body = sb.request(conn, "PATCH", path + "/status?fieldManager=fleet-operator",
                                        status, "application/merge-patch+json")
                if code >= 300:
                    raise RuntimeError(f"status {name}: {code} {body[:300]!r}")
        finally:
            conn.close()

    t = time.monotonic()
    in_threads(work, workers)
    log(f"seeded sites {start}..{end} in {time.monotonic() - t:.1f}s")


def measure(argv, env, stdout=subprocess.DEVNULL):
    """(wall s, cpu s, peak RSS bytes) of one process.

    Wall is the monotonic clock around the process; CPU is utime + stime
    from os.wait4. Peak RSS comes from GNU time's `%M`: a child forked from
    this Python process starts with Python's resident pages counted in its
    high-water mark, so ru_maxrss seen from here would be inflated; time
    forks the command from its own small image and reports it alone.
    """
    err = tempfile.TemporaryFile()
    with tempfile.NamedTemporaryFile("r") as rss_file:
        timed = [TIME, "-f", "%M", "-o", rss_file.name, *argv]
        t = time.perf_counter()
        proc = subprocess.Popen(timed, env=env, stdout=stdout, stderr=err, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {err.read()[-2000:]!r}")
        rss_kib = int(rss_file.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss_kib * 1024


def commands(sb, release, env, baseline=None):
    fleet = str(release / "kubectl-fleet")
    curl = sb.curl("-o", "/dev/null", sb.server + LIST_PATH)
    return [
        ("curl GET list", curl),
        ("kubectl get fc -o json", ["kubectl", "get", "fc", "-o", "json"]),
        ("kubectl get fc", ["kubectl", "get", "fc"]),
        ("kubectl fleet status -o json", [fleet, "status", "-o", "json"]),
        ("kubectl fleet status", [fleet, "status"]),
    ] + ([
        ("baseline: status -o json", [baseline, "status", "-o", "json"]),
        ("baseline: status", [baseline, "status"]),
    ] if baseline else [])


def bench_size(sb, release, env, n, repeat, baseline=None):
    # The output is checked once: every site is there.
    out = subprocess.run([str(release / "kubectl-fleet"), "status", "-o", "json"], env=env,
                         check=True, capture_output=True).stdout
    report = json.loads(out)
    assert len(report["sites"]) == n, (len(report["sites"]), n)
    list_bytes = len(subprocess.run(sb.curl(sb.server + LIST_PATH), env=env, check=True,
                                    capture_output=True).stdout)
    cmds = commands(sb, release, env, baseline)
    samples = {name: [] for name, _ in cmds}
    for name, argv in cmds:  # warm-up: discovery cache, server, page cache
        measure(argv, env)
    for _ in range(repeat):
        for name, argv in cmds:
            samples[name].append(measure(argv, env))
    result = {}
    for name, runs in samples.items():
        result[name] = tuple(statistics.median(r[k] for r in runs) for k in range(3))
    return result, list_bytes, len(out)


def start_time(argv, runs=30):
    """(median, minimum) wall seconds of `argv` from spawn to exit.

    Not through measure(): GNU time's own fork and exec would be counted
    (about 2.5 ms on this machine, and it drifts with the machine's state).
    posix_spawn from here is a vfork and one exec, stdout and stderr go to
    /dev/null; the harness reports `/bin/true` measured the same way as the
    floor any process pays on the machine.
    """
    walls = []
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
        for _ in range(runs + 1):  # the first run is a warm-up (page cache)
            t = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
            _, status = os.waitpid(pid, 0)
            walls.append(time.perf_counter() - t)
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError(f"{argv} exited {os.waitstatus_to_exitcode(status)}")
    finally:
        os.close(devnull)
    walls = walls[1:]
    return statistics.median(walls), min(walls)


def machine_note():
    cpus = os.cpu_count()
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()
    return f"{platform.system()} {platform.machine()}, {cpus} CPUs ({model}), load average at start {load[0]:.2f}"


def profile_note(bin_dir=None):
    """How the release binaries were built (the overrides the docs name)."""
    if bin_dir:
        return f"taken from `{bin_dir}` (--bin-dir; their profile is not known here)"
    overrides = {k: v for k, v in os.environ.items() if k.startswith("CARGO_PROFILE_RELEASE_")}
    if not overrides:
        return "release profile of Cargo.toml (strip, fat LTO, codegen-units 1)"
    return "release profile of Cargo.toml with " + ", ".join(f"`{k}={v}`" for k, v in sorted(overrides.items()))


def proc_cpu(pid):
    """utime + stime of a running process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_rss(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def heartbeat_load(server, n, rate, seconds, workers=4):
    """Heartbeat patches (lastHeartbeatTime only, as an edge sends them)
    to sites 0..n round-robin at `rate` per second for `seconds`; returns
    how many were sent."""
    sent = [0] * workers
    start = time.monotonic()

    def work(k):
        conn = server.connection()
        try:
            i = k
            while True:
                due = start + i / rate
                now = time.monotonic()
                if due - start >= seconds:
                    return
                if due > now:
                    time.sleep(due - now)
                name = f"site-{i % n:05d}"
                body = json.dumps({"status": {"lastHeartbeatTime": rfc3339(time.time())}})
                code, resp = server.request(conn, "PATCH", f"{LIST_PATH}/{name}/status?fieldManager=fleet-edge",
                                            body, "application/merge-patch+json")
                if code >= 300:
                    raise RuntimeError(f"heartbeat {name}: {code} {resp[:300]!r}")
                sent[k] += 1
                i += workers
        finally:
            conn.close()

    in_threads(work, workers)
    return sum(sent)


def bench_watch(server, release, env, n, seconds, baseline=None):
    """Watching a fleet of n sites that heartbeats every 30 s: CPU and peak
    RSS of each watcher, run side by side, while `seconds` of heartbeats
    arrive. {name: (cpu s, peak RSS bytes)}, heartbeats sent."""
    fleet = str(release / "kubectl-fleet")
    watchers = [
        ("kubectl get fc --watch", ["kubectl", "get", "fc", "--watch"]),
        ("kubectl fleet status --watch", [fleet, "status", "--watch"]),
        ("kubectl fleet status --watch -o json", [fleet, "status", "--watch", "-o", "json"]),
    ] + ([("baseline: status --watch", [baseline, "status", "--watch"])] if baseline else [])
    procs = [(name, subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)) for name, argv in watchers]
    try:
        # Past the initial list: every watcher's CPU has stopped moving.
        deadline, last = time.monotonic() + 120, None
        while time.monotonic() < deadline:
            time.sleep(1)
            cpu = [proc_cpu(p.pid) for _, p in procs]
            if cpu == last:
                break
            last = cpu
        before = {name: proc_cpu(p.pid) for name, p in procs}
        sent = heartbeat_load(server, n, n / 30, seconds)
        time.sleep(2)  # the last frames
        for name, p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited {p.returncode} while watching")
        result = {name: (proc_cpu(p.pid) - before[name], proc_peak_rss(p.pid)) for name, p in procs}
    finally:
        for _, p in procs:
            p.terminate()
            p.wait(timeout=30)
    return result, sent


def bench_server(server, release, sizes, repeat, baseline, work, watch_seconds=0):
    """P1/P1b on one API server: {sites: (medians, list bytes, report bytes)}, and
    with watch_seconds the --watch measure at the smallest size (see bench_watch)."""
    env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), KUBECACHEDIR=str(server.dir / "kube-cache"),
               HOME=str(work), NO_COLOR="1")
    run_checked([str(release / "kubectl-fleet"), "install", "--crds-only", "--apply"], env=env,
                stdout=subprocess.DEVNULL)
    conn = server.connection()
    for _ in range(300):
        if server.request(conn, "GET", LIST_PATH + "?limit=1")[0] == 200:
            break
        time.sleep(0.1)
    conn.close()
    results, have, watch = {}, 0, None
    for n in sorted(sizes):
        seed(server, have, n)
        have = n
        results[n] = bench_size(server, release, env, n, repeat, baseline)
        if watch is None and watch_seconds:
            watch = (n, *bench_watch(server, release, env, n, watch_seconds, baseline))
        log(f"{server.name}: {n} sites done")
    return results, watch


def p1_records(out, server_name, results):
    sizes = sorted(results)
    for n in sizes:
        res = results[n][0]
        curl, kj, kt = res["curl GET list"], res["kubectl get fc -o json"], res["kubectl get fc"]
        fj, ft = res["kubectl fleet status -o json"], res["kubectl fleet status"]
        at = f"{n:,} sites, {server_name}"
        out.emit("P1", f"status -o json wall / curl GET of the list ({at})", fj[0] / curl[0], "×", "≤ 1.5")
        out.emit("P1", f"status -o json wall / kubectl get fc -o json ({at})", fj[0] / kj[0], "×", "≤ 0.25")
        out.emit("P1", f"status -o json CPU / curl's CPU ({at})", fj[1] / curl[1], "×", "≤ 3")
        out.emit("P1", f"status -o json peak RSS ({at})", fj[2] / MIB, "MiB", "≤ 30")
        out.emit("P1b", f"status (table) wall / kubectl get fc ({at})", ft[0] / kt[0], "×", "≤ 0.5")
        out.emit("P1b", f"status (table) peak RSS / kubectl get fc's ({at})", ft[2] / kt[2], "×", "≤ 0.3")
    if len(sizes) > 1:
        lo, hi = results[sizes[0]][0], results[sizes[-1]][0]
        name = "kubectl fleet status -o json"
        out.emit("P1", f"status -o json peak RSS at {sizes[-1]:,} / at {sizes[0]:,} sites ({server_name}; "
                 "'flat': this harness's reading is within 10 %)", hi[name][2] / lo[name][2], "×", "≤ 1.1")


def detail_tables(server_name, results):
    lines = [f"#### {server_name}", "",
             "| sites | command | wall ms | CPU ms | peak RSS MiB |", "| ---: | --- | ---: | ---: | ---: |"]
    for n, (res, _, _) in results.items():
        for name, (wall, cpu, rss) in res.items():
            lines.append(f"| {n:,} | `{name}` | {wall * 1000:.0f} | {cpu * 1000:.0f} | {rss / MIB:.1f} |")
    lines += ["", "| sites | list size | JSON report |", "| ---: | ---: | ---: |"]
    for n, (_, list_bytes, out_bytes) in results.items():
        lines.append(f"| {n:,} | {list_bytes / MIB:.1f} MiB | {out_bytes / MIB:.1f} MiB |")
    return "\n".join(lines)


def side_by_side(all_results):
    """P1/P1b ratios of every server in columns."""
    names = list(all_results)
    sizes = sorted({n for r in all_results.values() for n in r})
    ratios = [
        ("json wall / curl", lambda r: r["kubectl fleet status -o json"][0] / r["curl GET list"][0], "≤ 1.5×"),
        ("json wall / kubectl get -o json", lambda r: r["kubectl fleet status -o json"][0] / r["kubectl get fc -o json"][0], "≤ 0.25×"),
        ("json CPU / curl", lambda r: r["kubectl fleet status -o json"][1] / r["curl GET list"][1], "≤ 3×"),
        ("json peak RSS MiB", lambda r: r["kubectl fleet status -o json"][2] / MIB, "≤ 30"),
        ("table wall / kubectl get", lambda r: r["kubectl fleet status"][0] / r["kubectl get fc"][0], "≤ 0.5×"),
        ("table RSS / kubectl get", lambda r: r["kubectl fleet status"][2] / r["kubectl get fc"][2], "≤ 0.3×"),
    ]
    lines = ["| sites | ratio | goal | " + " | ".join(names) + " |",
             "| ---: | --- | --- |" + " ---: |" * len(names)]
    for n in sizes:
        for label, f, goal in ratios:
            cells = []
            for name in names:
                r = all_results[name].get(n)
                cells.append(f"{f(r[0]):.2f}" if r else "not run")
            lines.append(f"| {n:,} | {label} | {goal} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_operator(timeout):
    """Runs operator_bench; (BENCH-RESULT text, note)."""
    log("$ " + " ".join(OPERATOR_CMD))
    t = time.monotonic()
    proc = subprocess.Popen(OPERATOR_CMD, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    chunks = []
    reader = threading.Thread(target=lambda: chunks.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
        note = "" if code == 0 else f"`operator_bench` exited with status {code}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
        note = f"`operator_bench` stopped after the {timeout:.0f} s limit (--operator-timeout)"
    reader.join(timeout=10)
    text = "".join(chunks)
    (Path(tempfile.gettempdir()) / "fleet-bench-operator.log").write_text(text)
    log(f"operator_bench took {time.monotonic() - t:.0f}s")
    return text, note


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="5000,10000,20000", help="sites for P1 (default 5000,10000,20000)")
    ap.add_argument("--realapi-sizes", help="sites for P1 on the real API server (default: --sizes)")
    ap.add_argument("--servers", choices=["both", "sandbox", "realapi"], default="both",
                    help="P1's API servers; 'both' (default) runs the real one only when tools/realapi built it")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes, one repeat, kube-sandbox only, no P3/P4/P5/P6")
    ap.add_argument("--self-test", action="store_true", help="check the BENCH-RESULT parser and exit")
    ap.add_argument("--no-build", action="store_true", help="use the existing target/release binaries")
    ap.add_argument("--bin-dir", help="take the three binaries from here instead (implies --no-build; "
                    "the test suite's smoke run passes its debug binaries)")
    ap.add_argument("--baseline", help="another kubectl-fleet binary (e.g. built from main) to run alongside")
    ap.add_argument("--skip-p4", action="store_true")
    ap.add_argument("--skip-p6", action="store_true")
    ap.add_argument("--skip-operator", action="store_true", help="skip P3/P5 (operator_bench)")
    ap.add_argument("--operator-timeout", type=float, default=3600, help="seconds (default 3600)")
    ap.add_argument("--write", metavar="FILE", help="write the report there (as BENCHMARKS.md) instead of stdout")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    argv_note = "python3 tools/bench/cli.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    sizes = [int(s) for s in args.sizes.split(",")]
    real_sizes = [int(s) for s in args.realapi_sizes.split(",")] if args.realapi_sizes else sizes
    if args.smoke:
        sizes, args.repeat, args.servers = [60, 120], 1, "sandbox"
        args.skip_p4 = args.skip_p6 = args.skip_operator = True
    for tool in ["curl", "kubectl", TIME]:
        if not shutil.which(tool):
            sys.exit(f"{tool} is required")
    want_real = args.servers in ("both", "realapi")
    if args.servers == "realapi" and not realapi_available():
        sys.exit("the real API server is not built for this work tree: run tools/realapi/build.sh")
    real_note = ""
    if args.servers == "both" and not realapi_available():
        want_real = False
        real_note = "The real API server was not run: not built for this work tree (tools/realapi/build.sh)."
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    release = target / "release"
    if args.bin_dir:
        release, args.no_build = Path(args.bin_dir), True
    if not args.no_build:
        run_checked(["cargo", "build", "--release", "--workspace", "--bins", "--examples"], cwd=ROOT)
        if not args.skip_operator:
            run_checked(OPERATOR_CMD[:5] + ["--no-run"], cwd=ROOT)
    started = datetime.datetime.now(datetime.timezone.utc)
    note = machine_note()
    work = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    out = Results()
    all_results, watch = {}, None
    try:
        if args.servers in ("both", "sandbox"):
            sb = Sandbox(release / "kube-sandbox", work / "sandbox")
            try:
                all_results[sb.name], watch = bench_server(sb, release, sizes, args.repeat, args.baseline, work,
                                                           watch_seconds=5 if args.smoke else 60)
            finally:
                sb.stop()
        if want_real:
            real = RealApi(work / "realapi")
            try:
                all_results[real.name], _ = bench_server(real, release, real_sizes, args.repeat, args.baseline,
                                                         work)
            finally:
                real.stop()
    finally:
        pass
    for name, results in all_results.items():
        p1_records(out, name, results)
    if watch:
        n, cpu_rss, sent = watch
        # CPU is read in clock ticks: a smoke run's few heartbeats may cost
        # kubectl less than one, which is then what it is counted as.
        kubectl_cpu = max(cpu_rss["kubectl get fc --watch"][0], 1 / os.sysconf("SC_CLK_TCK"))
        for name in ["kubectl fleet status --watch", "kubectl fleet status --watch -o json"]:
            out.emit("P1w", f"`{name}` CPU / `kubectl get fc --watch`'s ({n:,} sites, {sent:,} heartbeats)",
                     cpu_rss[name][0] / kubectl_cpu, "×", "")
            out.emit("P1w", f"`{name}` peak RSS ({n:,} sites)", cpu_rss[name][1] / MIB, "MiB", "")

    floor = start_time(["/bin/true"])
    out.emit("P2", "`/bin/true` start, median of 30 (the machine's floor, for reference)", floor[0] * 1000, "ms", "")
    binaries = []
    for b in ["kubectl-fleet", "fleet-operator", "kube-sandbox"]:
        size = (release / b).stat().st_size / MIB
        med, low = start_time([str(release / b), "--help"])
        binaries.append((b, size, med, low))
        shipped = b != "kube-sandbox"
        out.emit("P2", f"`{b} --help` start, median of 30", med * 1000, "ms", "≤ 5" if shipped else "")
        out.emit("P2", f"`{b} --help` start, minimum of 30", low * 1000, "ms", "")
        out.emit("P2", f"`{b}` binary size" + ("" if shipped else " (never shipped)"), size, "MiB",
                 "≤ 12" if shipped else "")

    p4_table = ""
    if not args.skip_p4:
        p4_table = run_checked(["cargo", "run", "-q", "--release", "--example", "correlation_bench"],
                               cwd=ROOT, capture_output=True, text=True).stdout
        for row in p4_table.splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) >= 5 and cells[0].isdigit():
                n = int(cells[0])
                out.emit("P4", f"correlate + cascades, {n:,} signals of 1,000 sites (best of 5)", float(cells[3]),
                         "ms", "≤ 50" if n == 100_000 else "")
                out.emit("P4", f"ns per signal at {n:,} signals ('linear': flat across sizes)", float(cells[4]),
                         "ns", "")
        factors_table = run_checked(["cargo", "run", "-q", "--release", "--example", "factors_bench"],
                                    cwd=ROOT, capture_output=True, text=True).stdout
        p4_table += "\n" + factors_table
        for row in factors_table.splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[0].isdigit():
                n = int(cells[0])
                out.emit("P4", f"common factors of every incident, {n:,} sites (best of 5)", float(cells[1]),
                         "ms", "")
                out.emit("P4", f"common factors: ns per site at {n:,} sites ('linear': flat across sizes)",
                         float(cells[2]), "ns", "")
    if not args.skip_p6:
        proc = run_checked(
            ["cargo", "nextest", "run", "-p", "kubectl-fleet", "--test", "integration",
             "-E", "test(/^cli_register::register_round_trips::sandbox$/)", "--no-capture"],
            cwd=ROOT, capture_output=True, text=True)
        m = re.search(r"register round trips: fresh (\d+), re-run (\d+), first site of a hub (\d+)",
                      proc.stdout + proc.stderr)
        if m:
            out.emit("P6", "`register SITE` API requests, new site", int(m.group(1)), "requests", "≤ 6")
            out.emit("P6", "`register SITE` API requests, re-run that changes nothing", int(m.group(2)),
                     "requests", "≤ 4")
            out.emit("P6", "`register SITE` API requests, first site of a hub (creates fleet-sites)",
                     int(m.group(3)), "requests", "")

    operator_text, operator_note = "", ""
    if not args.skip_operator:
        operator_text, operator_note = run_operator(args.operator_timeout)

    # One code path for every figure: the table is built from lines.
    records, rejected = parse_bench_lines("\n".join(out.lines))
    op_records, op_rejected = parse_bench_lines(operator_text)
    records += op_records
    rejected += op_rejected
    notes = []
    if args.skip_operator:
        notes.append("P3/P5 were not run (`--skip-operator`).")
    else:
        if not op_records:
            notes.append("P3/P5: **no BENCH-RESULT line came back** from `" + " ".join(OPERATOR_CMD) + "`.")
        if operator_note:
            notes.append(f"P3/P5: {operator_note}; its output is in {tempfile.gettempdir()}/fleet-bench-operator.log.")
    if rejected:
        notes.append(f"{rejected} BENCH-RESULT line(s) could not be read and are left out.")
    if args.skip_p4:
        notes.append("P4 was not run (`--skip-p4`).")
    if args.skip_p6:
        notes.append("P6 was not run (`--skip-p6`).")
    if real_note:
        notes.append(real_note)
    if any(k.startswith("CARGO_PROFILE_RELEASE_") for k in os.environ) and not args.bin_dir:
        notes.append("The binaries were built with the profile overrides named above: P2's sizes and start "
                     "times are of that build, not of the shipped profile (docs/benchmarks-cli.md#release-profile-p2 "
                     "has those).")
    goal_sizes = {5000, 10000, 20000}
    missing = sorted(goal_sizes - set(sizes))
    if missing and not args.smoke:
        notes.append("P1 at " + ", ".join(f"{n:,}" for n in missing) + " sites (named by the goal) was not run.")

    report = []
    report.append(f"Run of {started:%Y-%m-%d %H:%M} UTC; {note}; binaries: {profile_note(args.bin_dir)}; "
                  f"P1 medians of {args.repeat} interleaved runs after one warm-up.")
    report.append("")
    report.append(f"Command: `{argv_note.strip()}`")
    report.append("")
    report.append("### Goals")
    report.append("")
    report.append(goal_table(records))
    report.append("")
    for n in notes:
        report.append(f"- {n}")
    if notes:
        report.append("")
    if all_results:
        report.append("### P1 side by side")
        report.append("")
        report.append(side_by_side(all_results))
        report.append("")
        report.append("### P1 measurements")
        report.append("")
        for name, results in all_results.items():
            report.append(detail_tables(name, results))
            report.append("")
    if watch:
        n, cpu_rss, sent = watch
        report.append(f"### `--watch` over {n:,} sites (kube-sandbox)")
        report.append("")
        report.append(f"Side by side, while {sent:,} heartbeat patches arrived at {n / 30:.0f} per second "
                      "(every site every 30 s), past the initial list:")
        report.append("")
        report.append("| watcher | CPU s | CPU ms per 1,000 heartbeats | peak RSS MiB |")
        report.append("| --- | ---: | ---: | ---: |")
        for name, (cpu, rss) in cpu_rss.items():
            report.append(f"| `{name}` | {cpu:.2f} | {cpu * 1e6 / max(sent, 1):.0f} | {rss / MIB:.1f} |")
        report.append("")
    report.append("### P2 binaries")
    report.append("")
    report.append("| binary | size MiB | `--help` median ms | `--help` min ms |")
    report.append("| --- | ---: | ---: | ---: |")
    for b, size, med, low in binaries:
        report.append(f"| `{b}` | {size:.1f} | {med * 1000:.1f} | {low * 1000:.1f} |")
    report.append(f"| `/bin/true` (the floor) | | {floor[0] * 1000:.1f} | {floor[1] * 1000:.1f} |")
    report.append("")
    report.append("Start times are spawn to exit, measured by posix_spawn from the harness "
                  "(not through GNU time, whose own start would be counted).")
    report.append("")
    if p4_table:
        report.append("### P4 correlation, cascades and common factors")
        report.append("")
        report.append(p4_table.strip())
        report.append("")
    text = "\n".join(report)
    if args.write:
        Path(args.write).write_text(BENCHMARKS_HEADER + text + "\n" + kept_sections(args.write))
        log(f"wrote {args.write}")
    else:
        print(text)
    shutil.rmtree(work, ignore_errors=True)


# A section of BENCHMARKS.md this harness does not measure (per-platform
# sizes, docs/platforms.md): kept, from its heading to the end, when the
# file is rewritten.
KEPT_SECTION = "## Platforms: arm64 binaries and image sizes"


def kept_sections(path):
    try:
        old = Path(path).read_text()
    except OSError:
        return ""
    at = old.find("\n" + KEPT_SECTION + "\n")
    return "\n" + old[at + 1:] if at >= 0 else ""


BENCHMARKS_HEADER = """# Benchmarks (scale goals P1-P6)

The latest run of the one command that measures every scale goal (P1-P6,
named in each table row) in release builds, side by side with `curl` and `kubectl` and, for P1,
on both kube-sandbox and the real Kubernetes apiextensions-apiserver
(`tools/realapi`). Written by the harness itself; nothing here is asserted
in tests (the test suite runs a smoke-sized pass of the same harness,
`tests/bench_smoke.rs`).

## Re-run

```sh
python3 tools/bench/cli.py --write BENCHMARKS.md            # P1 at 5,000 / 10,000 / 20,000 sites, P2-P6
python3 tools/bench/cli.py --sizes 5000 --write BENCHMARKS.md
python3 tools/bench/cli.py --skip-operator                  # without P3/P5 (the long part)
```

It builds the release binaries first (the real profile uses fat LTO: ~16
minutes from scratch on the shared 2-core machine; prefix
`CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16`
for a quicker build, which the line below then names). The real API server
needs `tools/realapi/build.sh` once (docs/realapi.md); without it only
kube-sandbox is measured. What each figure is and how it is taken:
docs/benchmarks-cli.md (P1, P1b, P1w, P2, P4, P6) and
docs/benchmarks-operator.md (P3, P5).

## Latest run

"""


if __name__ == "__main__":
    main()

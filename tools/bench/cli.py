#!/usr/bin/env python3
"""Release-build CLI benchmarks of issue 10, side by side in one run.

    python3 tools/bench/cli.py                      # 5,000 / 10,000 / 20,000 sites
    python3 tools/bench/cli.py --sizes 5000 --repeat 5
    python3 tools/bench/cli.py --smoke              # tiny run: does the harness still work?

Builds the release binaries (`cargo build --release --workspace --bins`),
starts a release `kube-sandbox serve`, installs the CRDs with
`kubectl-fleet install --crds-only --apply`, and fills it with
FederatedClusters carrying edge-like status (server-side applied spec as
`register` does, one status merge patch as an edge and the hub together
would leave it). For every size it measures, interleaved and repeated:

  curl GET of the list | kubectl get fc -o json | kubectl get fc
  kubectl-fleet status -o json | kubectl-fleet status

wall time (monotonic clock around the process), CPU (utime + stime) and
peak RSS (GNU time's %M, see measure()) of each process, and prints the
medians and the ratios the issue's goals are stated in. Then `--help`
start time (median of 30), the size of each release binary, correlation
and cascades over 10k/100k/1M signals (`cargo run --release --example
correlation_bench`) and register's API round trips (the `cli_register`
test `register_round_trips`, which counts them from the sandbox's request
log).

Python 3 standard library only. Output is Markdown for
docs/benchmarks-cli.md. Nothing here asserts timings.
"""

import argparse
import base64
import datetime
import json
import os
import platform
import re
import shutil
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

ROOT = Path(__file__).resolve().parents[2]
GROUP = "federation.kubectl-fleet.dev"
LIST_PATH = f"/apis/{GROUP}/v1alpha1/federatedclusters"
TIERS = ["critical", "standard", "non-critical"]
ENVS = ["production", "staging", "development", "dr"]
REGIONS = ["eu-west-1", "us-east-1", "ap-south-1", "us-west-2"]
MIB = 1024 * 1024
TIME = "/usr/bin/time"  # GNU time, for peak RSS (see measure)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_checked(argv, **kw):
    log("$ " + " ".join(str(a) for a in argv))
    return subprocess.run(argv, check=True, **kw)


class Sandbox:
    """A release kube-sandbox process and what it takes to talk to it."""

    def __init__(self, binary, workdir):
        self.dir = workdir
        self.kubeconfig = workdir / "admin.kubeconfig"
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--kubeconfig", str(self.kubeconfig)],
            stdout=subprocess.DEVNULL,
            stderr=open(workdir / "sandbox.log", "wb"),
        )
        deadline = time.monotonic() + 60
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("kube-sandbox did not start; see sandbox.log")
            time.sleep(0.05)
        text = self.kubeconfig.read_text()
        self.server = re.search(r"server: (\S+)", text).group(1)
        ca = base64.b64decode(re.search(r"certificate-authority-data: (\S+)", text).group(1))
        token = re.search(r"token: (\S+)", text).group(1)
        self.ca_file = workdir / "ca.pem"
        self.ca_file.write_bytes(ca)
        # curl reads the header from a file, so the token is never in argv.
        self.header_file = workdir / "auth.header"
        fd = os.open(self.header_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"Authorization: Bearer {token}\n")
        self._auth = f"Bearer {token}"
        self._ctx = ssl.create_default_context(cadata=ca.decode())
        url = urlparse(self.server)
        self.host, self.port = url.hostname, url.port

    def connection(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self._ctx, timeout=60)

    def request(self, conn, method, path, body=None, content_type=None):
        headers = {"Authorization": self._auth, "Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, data

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def seed(sb, start, end, workers=4):
    """Creates sites start..end (exclusive), as `register` then the edge would."""
    now = time.time()
    errors = []

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
        except Exception as e:  # surfaced below
            errors.append(e)
        finally:
            conn.close()

    t = time.monotonic()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
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
    curl = ["curl", "-sS", "--fail", "--cacert", str(sb.ca_file), "-H", f"@{sb.header_file}",
            "-o", "/dev/null", sb.server + LIST_PATH]
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
    list_bytes = len(subprocess.run(
        ["curl", "-sS", "--fail", "--cacert", str(sb.ca_file), "-H", f"@{sb.header_file}",
         sb.server + LIST_PATH], check=True, capture_output=True).stdout)
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


def start_time(binary, runs=30):
    walls = []
    for _ in range(runs):
        walls.append(measure([str(binary), "--help"], os.environ.copy())[0])
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="5000,10000,20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat, skip P4/P6")
    ap.add_argument("--no-build", action="store_true", help="use the existing target/release binaries")
    ap.add_argument("--bin-dir", help="take the three binaries from here instead (implies --no-build; "
                    "the test suite's smoke run passes its debug binaries)")
    ap.add_argument("--baseline", help="another kubectl-fleet binary (e.g. built from main) to run alongside")
    ap.add_argument("--skip-p4", action="store_true")
    ap.add_argument("--skip-p6", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.smoke:
        sizes, args.repeat, args.skip_p4, args.skip_p6 = [60, 120], 1, True, True
    for tool in ["curl", "kubectl", TIME]:
        if not shutil.which(tool):
            sys.exit(f"{tool} is required")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    release = target / "release"
    if args.bin_dir:
        release, args.no_build = Path(args.bin_dir), True
    if not args.no_build:
        run_checked(["cargo", "build", "--release", "--workspace", "--bins"], cwd=ROOT)
    started = datetime.datetime.now(datetime.timezone.utc)
    note = machine_note()
    work = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    sb = Sandbox(release / "kube-sandbox", work)
    env = dict(os.environ, KUBECONFIG=str(sb.kubeconfig), KUBECACHEDIR=str(work / "kube-cache"),
               HOME=str(work), NO_COLOR="1")
    results = {}
    try:
        run_checked([str(release / "kubectl-fleet"), "install", "--crds-only", "--apply"], env=env,
                    stdout=subprocess.DEVNULL)
        conn = sb.connection()
        for _ in range(100):
            if sb.request(conn, "GET", LIST_PATH + "?limit=1")[0] == 200:
                break
            time.sleep(0.1)
        conn.close()
        have = 0
        for n in sorted(sizes):
            seed(sb, have, n)
            have = n
            results[n] = bench_size(sb, release, env, n, args.repeat, args.baseline)
            log(f"{n} sites done")
    finally:
        sb.stop()

    print(f"Run of {started:%Y-%m-%d %H:%M} UTC; {note}; "
          f"median of {args.repeat} interleaved runs after one warm-up.\n")
    print("| sites | command | wall ms | CPU ms | peak RSS MiB |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for n, (res, list_bytes, out_bytes) in results.items():
        for name, (wall, cpu, rss) in res.items():
            print(f"| {n:,} | `{name}` | {wall * 1000:.0f} | {cpu * 1000:.0f} | {rss / MIB:.1f} |")
    print()
    print("| sites | list size | JSON report | json wall / curl | json wall / kubectl -o json "
          "| json CPU / curl | json RSS | table wall / kubectl get | table RSS / kubectl get |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    goals = {}
    for n, (res, list_bytes, out_bytes) in results.items():
        curl, kj, kt = res["curl GET list"], res["kubectl get fc -o json"], res["kubectl get fc"]
        fj, ft = res["kubectl fleet status -o json"], res["kubectl fleet status"]
        r = {
            "json_wall_curl": fj[0] / curl[0], "json_wall_kubectl": fj[0] / kj[0],
            "json_cpu_curl": fj[1] / curl[1], "json_rss": fj[2] / MIB,
            "table_wall_kubectl": ft[0] / kt[0], "table_rss_kubectl": ft[2] / kt[2],
            "table_rss": ft[2] / MIB,
        }
        goals[n] = r
        print(f"| {n:,} | {list_bytes / MIB:.1f} MiB | {out_bytes / MIB:.1f} MiB | {r['json_wall_curl']:.2f}× | "
              f"{r['json_wall_kubectl']:.2f}× | {r['json_cpu_curl']:.2f}× | {r['json_rss']:.1f} MiB | "
              f"{r['table_wall_kubectl']:.2f}× | {r['table_rss_kubectl']:.2f}× |")
    print()
    print("| goal | " + " | ".join(f"{n:,}" for n in goals) + " |")
    print("| --- |" + " --- |" * len(goals))
    checks = [
        ("P1 json wall ≤ 1.5× curl", lambda r: r["json_wall_curl"] <= 1.5),
        ("P1 json wall ≤ 0.25× kubectl -o json", lambda r: r["json_wall_kubectl"] <= 0.25),
        ("P1 json CPU ≤ 3× curl", lambda r: r["json_cpu_curl"] <= 3),
        ("P1 json peak RSS ≤ 30 MiB", lambda r: r["json_rss"] <= 30),
        ("P1b table wall ≤ 0.5× kubectl get", lambda r: r["table_wall_kubectl"] <= 0.5),
        ("P1b table RSS ≤ 0.3× kubectl get", lambda r: r["table_rss_kubectl"] <= 0.3),
    ]
    for label, ok in checks:
        print(f"| {label} | " + " | ".join("met" if ok(r) else "**not met**" for r in goals.values()) + " |")
    print()

    print("| binary | size MiB | `--help` median ms | `--help` min ms |")
    print("| --- | ---: | ---: | ---: |")
    for b in ["kubectl-fleet", "fleet-operator", "kube-sandbox"]:
        size = (release / b).stat().st_size / MIB
        med, low = start_time(release / b)
        print(f"| `{b}` | {size:.1f} | {med * 1000:.1f} | {low * 1000:.1f} |")
    print()

    if not args.skip_p4:
        out = run_checked(["cargo", "run", "-q", "--release", "--example", "correlation_bench"],
                          cwd=ROOT, capture_output=True, text=True).stdout
        print(out)
    if not args.skip_p6:
        proc = run_checked(
            ["cargo", "nextest", "run", "-p", "kubectl-fleet", "--test", "cli_register",
             "-E", "test(register_round_trips)", "--no-capture"],
            cwd=ROOT, capture_output=True, text=True)
        m = re.search(r"register round trips: fresh (\d+), re-run (\d+)", proc.stdout + proc.stderr)
        fresh, rerun = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        print(f"| register round trips | count | goal |\n| --- | ---: | ---: |\n"
              f"| fresh site | {fresh} | ≤ 6 ({'met' if fresh is not None and fresh <= 6 else 'not met'}) |\n"
              f"| re-run | {rerun} | ≤ 4 ({'met' if rerun is not None and rerun <= 4 else 'not met'}) |\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

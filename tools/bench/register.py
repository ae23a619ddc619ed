#!/usr/bin/env python3
"""Register's latency in release builds, against a release
`kube-sandbox serve --round-trip-delay D --request-log FILE` modelling a
hub D away (every answer held back D, every new connection 2*D for its TCP
and TLS handshakes):

    python3 tools/bench/register.py                     # 20ms, 1,000 sites
    python3 tools/bench/register.py --delay 20ms --sites 1000 --write-section BENCHMARKS.md
    python3 tools/bench/register.py --bin-dir DIR       # binaries already built
    python3 tools/bench/register.py --smoke             # tiny: does it still work?

Measures, each on a hub that already holds fleet-sites (one warm-up site):
  1 site     `kubectl-fleet register SITE --output-file F`, median of 5
             new sites: wall time, and requests from the sandbox's request
             log. (The critical path -- 4 round trips -- is counted by
             tests/cli_enrol.rs with the answer delay alone: here a request
             on a new connection is logged only after its handshake delay,
             so start-after-end chains in this log overstate it.)
  1 file     `kubectl-fleet register -f inventory.yaml --output-dir DIR`
             with N sites (default concurrency, and --concurrency 32);
  re-run     the same command again (nothing changes, nothing is minted);
  N procs    N sequential `kubectl-fleet register SITE-i --output-file`
             processes, as a shell loop over an inventory would run them.
Prints Markdown and BENCH-RESULT lines; --write-section FILE replaces the
"## Register latency" section of FILE. Python 3 standard library only.
Nothing here asserts timings.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API = "federation.kubectl-fleet.dev/v1alpha1"
SECTION = "## Register latency"
PREFIX = "BENCH-RESULT "


def run(argv, env=None, check=True, stdout=subprocess.DEVNULL):
    t = time.monotonic()
    p = subprocess.run(argv, env=env, stdout=stdout, stderr=subprocess.PIPE)
    took = time.monotonic() - t
    if check and p.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr.decode(errors='replace')[-2000:]}")
    return took, p


class Sandbox:
    def __init__(self, binary, workdir, delay):
        self.dir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = workdir / "admin.kubeconfig"
        self.log = workdir / "requests.jsonl"
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--kubeconfig", str(self.kubeconfig),
             "--round-trip-delay", delay, "--request-log", str(self.log)],
            stdout=subprocess.DEVNULL, stderr=open(workdir / "sandbox.log", "wb"))
        deadline = time.monotonic() + 60
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("kube-sandbox did not start; see sandbox.log")
            time.sleep(0.05)

    def mark(self):
        """How many requests the log holds now."""
        with open(self.log) as f:
            return sum(1 for _ in f)

    def since(self, mark):
        with open(self.log) as f:
            return [json.loads(l) for l in f.readlines()[mark:]]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def inventory(path, names):
    docs = [
        f"apiVersion: {API}\nkind: FederatedCluster\nmetadata:\n  name: {n}\n  labels:\n    store-group: g{i % 10}\n"
        f"spec:\n  region: eu-west-1\n  tier: standard\n"
        for i, n in enumerate(names)
    ]
    path.write_text("---\n".join(docs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delay", default="20ms", help="kube-sandbox --round-trip-delay (default 20ms)")
    ap.add_argument("--sites", type=int, default=1000, help="sites in the file, and sequential processes (default 1000)")
    ap.add_argument("--bin-dir", help="take kubectl-fleet and kube-sandbox from DIR instead of building")
    ap.add_argument("--write-section", metavar="FILE", help=f"replace the '{SECTION}' section of FILE")
    ap.add_argument("--smoke", action="store_true", help="20 sites, to check the harness")
    args = ap.parse_args()
    if args.smoke:
        args.sites = 20
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    bins = Path(args.bin_dir) if args.bin_dir else target / "release"
    if not args.bin_dir:
        run(["cargo", "build", "--release", "-p", "kubectl-fleet", "--bin", "kubectl-fleet",
             "-p", "kube-sandbox", "--bin", "kube-sandbox"], stdout=None)
    fleet = str(bins / "kubectl-fleet")
    work = Path(tempfile.mkdtemp(prefix="fleet-register-bench-"))
    sb = Sandbox(bins / "kube-sandbox", work / "sandbox", args.delay)
    env = dict(os.environ, KUBECONFIG=str(sb.kubeconfig), HOME=str(work), NO_COLOR="1")
    results = []

    def result(measure, value, unit):
        results.append({"goal": "register", "measure": measure, "value": value, "unit": unit})

    try:
        run([fleet, "install", "--crds-only", "--apply"], env)
        run([fleet, "register", "warm-up", "--output-file", str(work / "warm-up.kubeconfig")], env)

        # One site: median of 5.
        walls, counts = [], []
        for i in range(5):
            mark = sb.mark()
            took, _ = run([fleet, "register", f"one-{i}", "--output-file", str(work / f"one-{i}.kubeconfig")], env)
            walls.append(took)
            counts.append(len(sb.since(mark)))
        result("1 new site: wall time (median of 5)", round(statistics.median(walls) * 1000), "ms")
        result("1 new site: requests", int(statistics.median(counts)), "requests")
        mark = sb.mark()
        took, _ = run([fleet, "register", "one-0", "--output-file", str(work / "one-0.kubeconfig")], env)
        result("1 site, re-run: wall time", round(took * 1000), "ms")
        result("1 site, re-run: requests", len(sb.since(mark)), "requests")

        n = args.sites
        for conc in [None, 32]:
            tag = f"c{conc or 'default'}"
            names = [f"file-{tag}-{i:05d}" for i in range(n)]
            inv = work / f"inventory-{tag}.yaml"
            inventory(inv, names)
            out = work / f"creds-{tag}"
            argv = [fleet, "register", "-f", str(inv), "--output-dir", str(out)]
            if conc:
                argv += ["--concurrency", str(conc)]
            label = f"--concurrency {conc}" if conc else "default concurrency (8)"
            mark = sb.mark()
            took, _ = run(argv, env)
            reqs = len(sb.since(mark))
            result(f"{n:,} sites from one file, {label}: wall time", round(took, 2), "s")
            result(f"{n:,} sites from one file, {label}: requests", reqs, "requests")
            if conc is None:
                mark = sb.mark()
                took, _ = run(argv, env)
                recs = sb.since(mark)
                writes = sum(1 for r in recs if r["verb"] not in ("get", "list", "watch") and not r["path"].endswith("selfsubjectrulesreviews"))
                result(f"{n:,} sites from one file, re-run (nothing changes): wall time", round(took, 2), "s")
                result(f"{n:,} sites from one file, re-run: writes and tokens minted", writes, "requests")

        procs = work / "procs"
        procs.mkdir()
        t = time.monotonic()
        mark = sb.mark()
        for i in range(n):
            run([fleet, "register", f"proc-{i:05d}", "--output-file", str(procs / f"proc-{i:05d}.kubeconfig")], env)
        took = time.monotonic() - t
        result(f"{n:,} sequential `register SITE` processes: wall time", round(took, 2), "s")
        result(f"{n:,} sequential `register SITE` processes: requests", len(sb.since(mark)), "requests")
    finally:
        sb.stop()
        shutil.rmtree(work, ignore_errors=True)

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    lines = [
        SECTION, "",
        f"Run of {started}; {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average at start {load:.2f}; kube-sandbox `--round-trip-delay {args.delay}`; "
        f"binaries: {'`' + args.bin_dir + '`' if args.bin_dir else 'release build of this tree'}.", "",
        "Command: `python3 tools/bench/register.py " + " ".join(sys.argv[1:]) + "`", "",
        "| measure | value | unit |", "| --- | ---: | --- |",
    ]
    for r in results:
        lines.append(f"| {r['measure']} | {r['value']:,} | {r['unit']} |" if isinstance(r["value"], int)
                     else f"| {r['measure']} | {r['value']} | {r['unit']} |")
    text = "\n".join(lines) + "\n"
    for r in results:
        print(PREFIX + json.dumps(r))
    print(text)
    if args.write_section:
        path = Path(args.write_section)
        old = path.read_text()
        start = old.find(SECTION)
        if start < 0:
            new = old.rstrip("\n") + "\n\n" + text
        else:
            end = old.find("\n## ", start + len(SECTION))
            new = old[:start] + text + ("" if end < 0 else old[end:])
        path.write_text(new)


if __name__ == "__main__":
    main()

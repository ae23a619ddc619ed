"""What the benchmark harnesses in tools/bench share (standard library only):
logging, RFC 3339 times, reading an API server's address and credentials out
of a kubeconfig, writing a private file, bounding a run in time, and starting
and stopping the real API server (tools/realapi)."""

import datetime
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class TimeLimit(Exception):
    """The run's time limit was reached (see `bounded`)."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rfc3339(t):
    """Unix time `t` as the API server writes times: whole seconds, UTC."""
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubeconfig_field(text, key):
    """The first value of `key` in a kubeconfig's text (server, certificate data, token)."""
    m = re.search(rf"{key}: (\S+)", text)
    return m.group(1) if m else None


def private_file(path, data):
    """Writes `data` to `path`, readable by its owner only (keys, tokens)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def signal_obj(kind, severity, namespace, wkind, wname, message, first, last, count):
    s = {"type": kind, "severity": severity, "namespace": namespace,
         "workload": {"kind": wkind, "name": wname},
         "firstSeen": rfc3339(first), "lastSeen": rfc3339(last), "count": count}
    if message:
        s["message"] = message
    return s


def bounded(prog, time_limit, stop):
    """Ends the run after `time_limit` seconds (raising TimeLimit) or at
    SIGINT, SIGTERM or SIGHUP (raising SystemExit), first setting the
    threading.Event `stop` so that worker threads end too; the caller's
    `finally` then stops what it started. Call `unbounded()` when done."""

    def on_signal(signum, _frame):
        stop.set()
        raise SystemExit(f"{prog}: stopped by signal {signal.Signals(signum).name}")

    def on_alarm(_signum, _frame):
        stop.set()
        raise TimeLimit(f"the time limit of {time_limit:.0f} s was reached")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)


def unbounded():
    """Cancels the time limit of `bounded`."""
    signal.setitimer(signal.ITIMER_REAL, 0)


def realapi_start(workdir):
    """Starts etcd and the real API server alone (tools/realapi/start.sh
    DIR: loopback, CRDs and custom resources only, an admin client
    certificate in DIR/kubeconfig). A watcher started with them stops them
    should this process die without calling `realapi_stop` (SIGKILL).
    Raises RuntimeError with start.sh's own words when it fails; whatever
    it started is stopped by `realapi_stop(workdir)` either way."""
    env = dict(os.environ, REALAPI_WATCH_PID=str(os.getpid()))
    p = subprocess.run(["bash", str(ROOT / "tools/realapi/start.sh"), str(workdir)], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError(f"tools/realapi/start.sh failed:\n{p.stderr.decode(errors='replace')[-2000:]}")


def realapi_stop(workdir):
    """Stops what `realapi_start(workdir)` started, by the PIDs it recorded."""
    subprocess.run(["bash", str(ROOT / "tools/realapi/stop.sh"), str(workdir)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def realapi_built():
    """None when the real API server and etcd are built, else what to run."""
    p = subprocess.run(["bash", str(ROOT / "tools/realapi/start.sh"), "--check"], capture_output=True, text=True)
    return None if p.returncode == 0 else (p.stderr.strip() or "run tools/realapi/build.sh")

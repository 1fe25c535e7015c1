"""The HTTP gateway on loopback: GET and PUT p50, then 50 concurrent appenders.

Starts a real ``minarad`` (gateway on a free loopback port) on a fresh
workspace, then measures:

- ``GET /v1/workspace/files/MEMORY.md``, median of N (goal under 5 ms);
- ``PUT`` of a small file with ``If-Match``, median of N (goal under 20 ms),
  beside ``Store.write`` called in-process at the same moment (the baseline:
  what the write path costs on this machine now, without HTTP);
- PUT throughput with ``--put-clients`` (8) clients at once, each rewriting
  its own file, beside a minimal Starlette app under uvicorn that writes a
  temporary file, fsyncs and renames it (run in the same run), with the
  CPU time each server process spent per PUT (Linux: from ``/proc``), which
  is what bounds the ratio on a busy machine;
- 50 clients appending to one file for ``--seconds`` (default 20): every
  accepted append must be in the final text exactly once and in its own
  commit (0 errors, 0 lost), with the requests per second printed beside
  the rate of ``minara memory append`` run back to back for the same file.

Run: python bench/http_load.py [--runs 200] [--clients 50] [--seconds 20] [--put-only]
"""

from __future__ import annotations

import os
import sys


import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402

BIN = os.path.dirname(sys.executable)


def start(tmp: str) -> tuple[subprocess.Popen, dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINARA_")}
    env.update(HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
               MINARA_WORKSPACE_DIR=os.path.join(tmp, "ws"), MINARA_AUTHOR="bench",
               MINARA_HTTP="127.0.0.1:0")
    log = open(os.path.join(tmp, "minarad.log"), "wb")
    proc = subprocess.Popen([os.path.join(BIN, "minarad")], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    address = os.path.join(tmp, "state", "minara", "gateway", "address.json")
    deadline = time.monotonic() + 60
    while not os.path.exists(address) or "ready:" not in open(log.name).read():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(open(log.name).read())
        time.sleep(0.05)
    with open(address) as fh:
        url = json.load(fh)["url"]
    return proc, env, url


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def bench_get_put(api: httpx.Client, runs: int) -> tuple[float, float]:
    def get():
        assert api.get("/v1/workspace/files/MEMORY.md").status_code == 200

    etag = [api.put("/v1/workspace/files/bench/put.md", json={"text": "0\n"}).headers["etag"]]
    n = [0]

    def put():
        n[0] += 1
        r = api.put("/v1/workspace/files/bench/put.md", json={"text": f"{n[0]}\n"},
                    headers={"If-Match": etag[0]})
        assert r.status_code == 200, r.text
        etag[0] = r.headers["etag"]

    return median_ms(get, runs), median_ms(put, max(runs // 2, 10))


def store_write_ms(tmp: str, runs: int) -> float:
    """The baseline: ``Store.write`` in this process, no HTTP, same machine, same moment."""
    from minarad.store import Store

    store = Store(os.path.join(tmp, "baseline"), operator="bench")
    store.ensure()
    last = [store.write("put.md", "0\n", author="bench", source="api")]
    n = [0]

    def write():
        n[0] += 1
        last[0] = store.write("put.md", f"{n[0]}\n", base=last[0].sha256, author="bench",
                              source="api")

    try:
        return median_ms(write, runs)
    finally:
        store.close()


def load(url: str, headers: dict, clients: int, seconds: float) -> dict:
    accepted: list[str] = []
    errors: list[str] = []
    guard = threading.Lock()
    stop = time.monotonic() + seconds

    def client(i: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
            k = 0
            while time.monotonic() < stop:
                line = f"- client {i} append {k}"
                k += 1
                try:
                    r = c.post("/v1/workspace/append/bench/load.md", json={"text": line})
                except httpx.HTTPError as exc:
                    with guard:
                        errors.append(repr(exc))
                    continue
                with guard:
                    (accepted if r.status_code == 200 else errors).append(
                        line if r.status_code == 200 else f"{r.status_code} {r.text[:200]}")

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"accepted": accepted, "errors": errors, "elapsed": time.monotonic() - started}


#: The baseline for PUT throughput: a minimal Starlette app that makes each write
#: durable as simply as it can (temporary file, fsync, rename), no versioning.
BASELINE_APP = """
import os, tempfile
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

ROOT = os.environ["BASELINE_ROOT"]

def write(rel, data):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)

async def put(request):
    body = await request.json()
    await run_in_threadpool(write, request.path_params["path"], body["text"].encode())
    return JSONResponse({"ok": True}, headers={"ETag": '"x"'})

app = Starlette(routes=[Route("/v1/workspace/files/{path:path}", put, methods=["PUT"])])
"""


def start_baseline(tmp: str) -> tuple[subprocess.Popen, str]:
    """The minimal Starlette app under uvicorn, on a free loopback port."""
    import socket

    folder = os.path.join(tmp, "baseline-app")
    os.makedirs(folder)
    with open(os.path.join(folder, "baseline_app.py"), "w") as fh:
        fh.write(BASELINE_APP)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "BASELINE_ROOT": os.path.join(tmp, "baseline-files")}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "baseline_app:app", "--port",
                             str(port), "--log-level", "warning"], cwd=folder, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.put(f"{url}/v1/workspace/files/probe.md", json={"text": "x"})
            return proc, url
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU seconds of process ``pid`` so far (None off Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def put_rate(url: str, headers: dict, clients: int, seconds: float,
             pid: int | None = None) -> dict:
    """PUTs per second and p95 with ``clients`` at once, each rewriting a file of its own;
    with ``pid``, the CPU milliseconds that server process spent per PUT."""
    times: list[float] = []
    failures: list[str] = []
    guard = threading.Lock()
    stop = time.monotonic() + seconds

    def client(i: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
            tag, k = None, 0
            while time.monotonic() < stop:
                k += 1
                t = time.perf_counter()
                r = c.put(f"/v1/workspace/files/bench/put-{i}.md", json={"text": f"{k}\n"},
                          headers={"If-Match": tag} if tag else {})
                with guard:
                    if r.status_code == 200:
                        times.append(time.perf_counter() - t)
                        tag = r.headers.get("etag")
                    else:
                        failures.append(f"{r.status_code} {r.text[:200]}")

    started = time.monotonic()
    cpu_before = cpu_seconds(pid) if pid else None
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cpu_after = cpu_seconds(pid) if pid else None
    times.sort()
    cpu_ms = None
    if cpu_before is not None and cpu_after is not None and times:
        cpu_ms = (cpu_after - cpu_before) * 1000 / len(times)
    return {"rate": len(times) / (time.monotonic() - started), "failures": failures,
            "p95_ms": times[int(0.95 * (len(times) - 1))] * 1000 if times else 0.0,
            "cpu_ms": cpu_ms}


def cli_rate(env: dict, seconds: float) -> float:
    minara = os.path.join(BIN, "minara")
    done, stop = 0, time.monotonic() + seconds
    started = time.monotonic()
    while time.monotonic() < stop:
        subprocess.run([minara, "memory", "append", "bench/cli.md", f"- cli {done}"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        done += 1
    return done / (time.monotonic() - started)


def check_load(ws: str, accepted: list[str]) -> tuple[int, int]:
    """(lost or duplicated appends, commits of the file minus accepted appends)."""
    with open(os.path.join(ws, "bench", "load.md")) as fh:
        lines = fh.read().splitlines()
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    bad = sum(1 for line in accepted if counts.get(line) != 1) + len(lines) - len(accepted)
    commits = int(subprocess.run(["git", "-C", ws, "rev-list", "--count", "HEAD", "--",
                                  "bench/load.md"], capture_output=True, text=True,
                                 check=True).stdout)
    return bad, commits - len(accepted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--put-clients", type=int, default=8)
    ap.add_argument("--put-seconds", type=float, default=5.0)
    ap.add_argument("--put-only", action="store_true",
                    help="stop after the PUT throughput (skip the appenders)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="minara-bench-http-")
    proc, env, url = start(tmp)
    try:
        token = subprocess.run([os.path.join(BIN, "minara"), "token"], env=env, check=True,
                               capture_output=True, text=True).stdout.strip()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers) as api:
            get_ms, put_ms = bench_get_put(api, args.runs)
        base_ms = store_write_ms(tmp, max(args.runs // 2, 10))
        print(f"  GET file p50 {get_ms:6.2f} ms (goal < 5 ms)")
        print(f"  PUT file p50 {put_ms:6.2f} ms (goal < 20 ms); Store.write in-process p50 "
              f"{base_ms:.2f} ms: the HTTP layer adds {put_ms - base_ms:.2f} ms "
              f"(ratio {put_ms / base_ms:.2f}x)")
        base_proc, base_url = start_baseline(tmp)
        try:
            theirs = put_rate(base_url, {}, args.put_clients, args.put_seconds, base_proc.pid)
        finally:
            base_proc.terminate()
            base_proc.wait(timeout=30)
        ours = put_rate(url, headers, args.put_clients, args.put_seconds, proc.pid)
        print(f"  PUT at concurrency {args.put_clients}, {args.put_seconds:.0f} s each: minarad "
              f"{ours['rate']:.0f} req/s (p95 {ours['p95_ms']:.0f} ms, "
              f"{len(ours['failures'])} failed); minimal Starlette app, temp file + fsync + "
              f"rename: {theirs['rate']:.0f} req/s (p95 {theirs['p95_ms']:.0f} ms); ratio "
              f"{ours['rate'] / theirs['rate']:.2f}x (goal: at least 0.5x)")
        if ours["cpu_ms"] is not None and theirs["cpu_ms"] is not None:
            print(f"  CPU per PUT: minarad {ours['cpu_ms']:.1f} ms, minimal Starlette app "
                  f"{theirs['cpu_ms']:.1f} ms ({os.getloadavg()[0]:.1f} load average now)")
        for err in ours["failures"][:3]:
            print(f"    failed: {err}")
        if args.put_only:
            return
        result = load(url, headers, args.clients, args.seconds)
        rate = len(result["accepted"]) / result["elapsed"]
        lost, extra_commits = check_load(os.path.join(tmp, "ws"), result["accepted"])
        print(f"  {args.clients} appenders for {args.seconds:.0f} s: {len(result['accepted'])} "
              f"accepted, {len(result['errors'])} errors, {lost} lost or duplicated, "
              f"{extra_commits} commits more than appends")
        for err in result["errors"][:5]:
            print(f"    error: {err}")
        cli = cli_rate(env, min(args.seconds, 10.0))
        print(f"  appends/s: HTTP {rate:.0f} ({args.clients} clients) vs CLI {cli:.0f} "
              f"(minara memory append, back to back): ratio {rate / cli:.1f}x")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The HTTP gateway on loopback: GET and PUT p50, then 50 concurrent appenders.

Starts a real ``minarad`` (gateway on a free loopback port) on a fresh
workspace, then measures:

- ``GET /v1/workspace/files/MEMORY.md``, median of N (goal under 5 ms);
- ``PUT`` of a small file with ``If-Match``, median of N (goal under 20 ms),
  beside ``Store.write`` called in-process at the same moment (the baseline:
  what the write path costs on this machine now, without HTTP);
- 50 clients appending to one file for ``--seconds`` (default 20): every
  accepted append must be in the final text exactly once and in its own
  commit (0 errors, 0 lost), with the requests per second printed beside
  the rate of ``minara memory append`` run back to back for the same file.

Run: python bench/http.py [--runs 200] [--clients 50] [--seconds 20]
"""

from __future__ import annotations

import os
import sys

# This file is named like the standard library's ``http`` package: keep its
# folder off the import path so that ``http.client`` (httpx needs it) is found.
sys.path[:] = [p for p in sys.path
               if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse  # noqa: E402
import json  # noqa: E402
import shutil
import signal
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

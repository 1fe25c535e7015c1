"""Latency from a commit to its followers, for each kind of writer, daemon running.

A real ``minarad`` (gateway on, a bare remote as ``origin``) on a fresh
workspace. Each round, one writer commits, then the bench watches until the
search index, the wiki link table and the knowledge catalogue record that
commit and the remote's ``main`` names it (read from their files every
5 ms). Writers: a ``minara memory set`` process, a hand-made ``git commit``,
an HTTP ``PUT`` to the gateway, an MCP ``memory_set`` over HTTP, and a
``minara sync`` process pulling another machine's commit. Prints p50/p95
per writer and follower, and p95 against the 2 s goal. ``--compare BIN`` runs another install's
``minara``/``minarad`` the same way (rounds it never follows count as missed).

Usage: python bench/follow.py [--rounds 10] [--compare /path/to/venv/bin]
"""

from __future__ import annotations

import sys
from pathlib import Path

# The bench folder comes off the import path: its modules never hide the standard library.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import sqlite3  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

BIN = Path(sys.executable).parent
GOAL_S = 2.0
ROUND_TIMEOUT_S = 10.0
FOLLOWERS = ("index", "wiki", "catalogue", "pushed")


def make_env(root: Path) -> dict:
    home = root / "home"
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "MINARA_CONFIG")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), MINARA_WORKSPACE_DIR=str(root / "ws"),
               MINARA_AUTHOR="bench", MINARA_HTTP="127.0.0.1:0", MINARA_JOBS_ENABLED="0",
               MINARA_MCP_HTTP_ENABLED="1", MINARA_MCP_HTTP_PORT="0",
               MINARA_DEBOUNCE_MS="3000", MINARA_DEBOUNCE_CAP_MS="6000",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.org",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.org")
    return env


def _meta(path: Path) -> str | None:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='commit'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def _json_commit(path: Path) -> str | None:
    try:
        return json.loads(path.read_text()).get("commit")
    except (OSError, ValueError):
        return None


def _ref(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


class Workspace:
    """Where each follower records the commit it reflects."""

    def __init__(self, root: Path, env: dict):
        from minarad.index.state import index_dir_for
        from minarad.knowledge.catalogue import catalogue_path

        self.ws = root / "ws"
        self.remote = root / "remote.git"
        state_dir = Path(env["XDG_STATE_HOME"]) / "minara"
        self.files = {
            "index": lambda: _json_commit(index_dir_for(state_dir, self.ws) / "state.json"),
            "wiki": lambda: _meta(self.ws / ".git" / "minara" / "wiki.sqlite3"),
            "catalogue": lambda: _meta(catalogue_path(state_dir, self.ws)),
            "pushed": lambda: _ref(self.remote / "refs" / "heads" / "main"),
        }

    def head(self) -> str:
        return subprocess.run(["git", "-C", str(self.ws), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()

    def watch(self, commit: str, start: float) -> dict[str, float | None]:
        """Seconds from ``start`` until each follower names ``commit`` (None: never)."""
        seen: dict[str, float | None] = dict.fromkeys(FOLLOWERS)
        deadline = start + ROUND_TIMEOUT_S
        while time.monotonic() < deadline and None in seen.values():
            for name, read in self.files.items():
                if seen[name] is None and read() == commit:
                    seen[name] = time.monotonic() - start
            time.sleep(0.005)
        return seen


def cli_writer(bin_dir: Path, env: dict, ws: Path, n: int) -> None:
    subprocess.run([str(bin_dir / "minara"), "memory", "set", f"wiki/cli-{n}.md",
                    f"# CLI {n}\n\nLinks [[git-{n}]]."], env=env, check=True,
                   capture_output=True)


def git_writer(bin_dir: Path, env: dict, ws: Path, n: int) -> None:
    (ws / "wiki" / f"git-{n}.md").write_text(f"# Git {n}\n\nBy hand.\n")
    subprocess.run(["git", "-C", str(ws), "add", f"wiki/git-{n}.md"], env=env, check=True)
    subprocess.run(["git", "-C", str(ws), "commit", "-q", "-m", f"by hand {n}"], env=env,
                   check=True)


def http_writer(bin_dir: Path, env: dict, ws: Path, n: int) -> None:
    url, token = env["_url"], env["_token"]
    body = json.dumps({"text": f"# HTTP {n}\n\nPut over HTTP.\n"}).encode()
    request = urllib.request.Request(f"{url}/v1/workspace/files/wiki/http-{n}.md", data=body,
                                     method="PUT", headers={
                                         "Authorization": f"Bearer {token}",
                                         "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()


def mcp_writer(bin_dir: Path, env: dict, ws: Path, n: int) -> None:
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def call() -> None:
        transport = streamable_http_client(env["_mcp"], http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {env['_token']}"}, timeout=30))
        async with Client(transport, read_timeout_seconds=30) as client:
            await client.call_tool("memory_set", {"file": f"wiki/mcp-{n}.md",
                                                  "text": f"# MCP {n}\n", "base": 0})

    asyncio.run(call())


def sync_writer(bin_dir: Path, env: dict, ws: Path, n: int) -> None:
    """Another machine pushes a commit; ``minara sync`` (a process) pulls it in."""
    other = {**env, "MINARA_WORKSPACE_DIR": env["_other"]}
    run = [str(bin_dir / "minara")]
    subprocess.run([*run, "memory", "set", f"wiki/other-{n}.md", f"# Other {n}"], env=other,
                   check=True, capture_output=True)
    subprocess.run([*run, "sync"], env=other, check=True, capture_output=True)
    subprocess.run([*run, "sync"], env=env, check=True, capture_output=True)


WRITERS = {"minara memory set": cli_writer, "git commit": git_writer, "HTTP PUT": http_writer,
           "MCP memory_set": mcp_writer, "minara sync (pull)": sync_writer}


def run_install(bin_dir: Path, rounds: int) -> dict[str, dict[str, list[float | None]]]:
    root = Path(tempfile.mkdtemp(prefix="minara-follow-"))
    env = make_env(root)
    proc = None
    try:
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(root / "remote.git")],
                       check=True)
        run = [str(bin_dir / "minara")]
        subprocess.run([*run, "init"], env=env, check=True, capture_output=True)
        subprocess.run([*run, "remote", "add", "origin", str(root / "remote.git")], env=env,
                       check=True, capture_output=True)
        (root / "ws" / "wiki").mkdir(exist_ok=True)
        log = open(root / "minarad.log", "wb")
        proc = subprocess.Popen([str(bin_dir / "minarad"), "--log-level", "WARNING"], env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        space = Workspace(root, env)
        address = Path(env["XDG_STATE_HOME"]) / "minara" / "gateway" / "address.json"
        deadline = time.monotonic() + 60
        while not address.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        env["_url"] = json.loads(address.read_text())["url"]
        env["_token"] = subprocess.run([*run, "token"], env=env, capture_output=True,
                                       text=True, check=True).stdout.strip()
        endpoint = root / "ws" / ".git" / "minara" / "mcp-http.json"
        while not endpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        env["_mcp"] = json.loads(endpoint.read_text())["url"]
        env["_other"] = str(root / "other")
        other = {**env, "MINARA_WORKSPACE_DIR": env["_other"]}
        subprocess.run([*run, "remote", "add", "origin", str(root / "remote.git")], env=other,
                       check=True, capture_output=True)
        space.watch(space.head(), time.monotonic())  # the start-up catch-ups settle
        results: dict[str, dict[str, list[float | None]]] = {}
        for n in range(rounds):
            for name, writer in WRITERS.items():
                writer(bin_dir, env, space.ws, n)
                start = time.monotonic()  # the writer returned: its commit is made
                seen = space.watch(space.head(), start)
                for follower, delay in seen.items():
                    results.setdefault(name, {}).setdefault(follower, []).append(delay)
        return results
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(title: str, results: dict) -> None:
    print(title)
    for writer, followers in results.items():
        cells = []
        for follower in FOLLOWERS:
            delays = followers[follower]
            done = [d for d in delays if d is not None]
            if not done:
                cells.append(f"{follower} never")
                continue
            missed = len(delays) - len(done)
            p95 = percentile(done, 0.95) if not missed else float("inf")
            cells.append(f"{follower} p50 {statistics.median(done) * 1000:4.0f} ms "
                         f"p95 {p95 * 1000:4.0f} ms ({p95 / GOAL_S:.2f}x goal)"
                         + (f" missed {missed}" if missed else ""))
        print(f"  {writer:<18} " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--compare", type=Path, help="another install's bin folder")
    args = parser.parse_args()
    report(f"commit -> followed, {args.rounds} rounds per writer (this tree):",
           run_install(BIN, args.rounds))
    if args.compare:
        report(f"commit -> followed ({args.compare}):", run_install(args.compare, args.rounds))


if __name__ == "__main__":
    main()

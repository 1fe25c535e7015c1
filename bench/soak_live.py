"""Live soak: a real minarad under every kind of writer and a hostile remote for N minutes.

A fresh workspace with a bare remote; a real ``minarad`` (HTTP gateway and
MCP endpoint on loopback) watches it while, at once:

- editors save files: atomic saves (temp file renamed over) and in-place
  saves (truncate, then write in two pieces); now and then a stale 0-byte
  ``.git/objects/xx/...lock`` (what a killed writer leaves) is planted for
  exactly the content about to be saved, and the save must be committed;
- CLI writers run ``minara memory append``, ``memory set``, ``wiki put``
  (and ``memory set`` of a name that is not UTF-8: refused, path_not_utf8);
- HTTP writers append and PUT through the gateway with its bearer token;
- MCP writers call ``memory_append`` / ``memory_set`` on the daemon's MCP
  endpoint with the official SDK client;
- another clone pushes to the remote with plain git (ordinary edits,
  clashing lines, and hostile commits: see ``bench/soak_hostile.py``), and
  ``minara sync`` runs every few seconds beside the daemon's own syncs;
- files whose names are not UTF-8 appear in the workspace.

At the end (writers stopped, edits settled, a last sync) it checks, and
prints: every acknowledged write is there (an appended line once at HEAD,
a set text in history, a file's last save at HEAD), nothing duplicated,
``git fsck --strict`` clean on workspace and remote, the daemon's peak RSS
under 300 MB, each hostile kind let sync go on and stayed on the remote;
and counts and rates per writer kind, errors by code. Exit status 1 when a
check fails.

Run: python bench/soak_live.py [--minutes 10] [--hostile all|none|KIND,...] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The soak's own modules are found last: they never hide the standard library's.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE]

from soak_checks import Ledger, run_checks  # noqa: E402
from soak_hostile import KIND_DOC, KINDS, HostileRemote  # noqa: E402
from soak_writers import (  # noqa: E402
    CliWriter,
    EditorWriter,
    HttpWriter,
    McpWriter,
    Soak,
    Syncer,
)

BIN = os.path.dirname(sys.executable)
MINARA, MINARAD = os.path.join(BIN, "minara"), os.path.join(BIN, "minarad")
#: Variables of the calling shell that must not reach the soak's processes.
SCRUB = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "LISTEN_FDS")


def make_env(root: str, debounce_ms: int) -> dict:
    """An environment isolated in ``root``: workspace, home, gateway and MCP on loopback."""
    home = os.path.join(root, "home")
    for sub in ("config", "state", "data", "cache"):
        os.makedirs(os.path.join(home, sub))
    env = {k: v for k, v in os.environ.items()
           if k not in SCRUB and not k.startswith(("MINARA_", "WORKSPACE_"))}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
               XDG_STATE_HOME=os.path.join(home, "state"),
               XDG_DATA_HOME=os.path.join(home, "data"),
               XDG_CACHE_HOME=os.path.join(home, "cache"),
               MINARA_WORKSPACE_DIR=os.path.join(root, "ws"), MINARA_AUTHOR="soak",
               MINARA_OPERATOR="the-operator", MINARA_DEBOUNCE_MS=str(debounce_ms),
               MINARA_HTTP="127.0.0.1:0", MINARA_MCP_HTTP_ENABLED="1",
               MINARA_MCP_HTTP_PORT="0", MINARA_SYNC_MACHINE="soak-ws",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.path.join(home, ".gitconfig"),
               PYTHONUNBUFFERED="1")
    return env


def wait_for(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)


def cli(env: dict, *args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([MINARA, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def start(root: str, args) -> Soak:
    """The workspace, its remote and a running daemon with its endpoints."""
    env = make_env(root, args.debounce_ms)
    bare = os.path.join(root, "remote.git")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", bare], check=True)
    for argv in (("init",), ("remote", "add", "origin", bare), ("sync",)):
        done = cli(env, *argv)
        if done.returncode != 0:
            raise RuntimeError(f"minara {' '.join(argv)}: {done.stderr}")
    log_path = os.path.join(root, "minarad.log")
    with open(log_path, "wb") as log:
        daemon = subprocess.Popen([MINARAD, "--log-level", "INFO"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
    try:
        return _connect(env, root, bare, daemon, log_path)
    except BaseException:
        daemon.kill()
        daemon.wait()
        raise


def _connect(env: dict, root: str, bare: str, daemon: subprocess.Popen, log_path: str) -> Soak:
    """Wait for the daemon, its gateway and its MCP endpoint; the soak's handle on them."""
    ws = env["MINARA_WORKSPACE_DIR"]
    wait_for(lambda: "ready:" in open(log_path, errors="replace").read()
             or daemon.poll() is not None, "minarad ready")
    if daemon.poll() is not None:
        raise RuntimeError(open(log_path, errors="replace").read())
    address = os.path.join(env["XDG_STATE_HOME"], "minara", "gateway", "address.json")
    url = wait_for(lambda: os.path.exists(address) and json.load(open(address))["url"],
                   "the gateway's address")
    wait_for(lambda: os.path.exists(os.path.join(ws, ".git", "minara", "mcp-http.json")),
             "the MCP endpoint")
    mcp = json.loads(cli(env, "--json", "mcp", "endpoint", "--show-token").stdout)
    return Soak(env=env, ws=ws, bare=bare, root=root, daemon=daemon, log_path=log_path,
                http_url=url, http_token=cli(env, "token").stdout.strip(),
                mcp_url=mcp["url"], mcp_token=mcp["token"], minara=MINARA)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(args) -> int:
    root = tempfile.mkdtemp(prefix="minara-soak-live-")
    soak = start(root, args)
    try:
        result = soak_for(soak, args)
    finally:
        exit_status = stop_daemon(soak)
    if exit_status != 0:
        result["checks"].append({"check": "daemon stops cleanly", "ok": False,
                                 "detail": f"exit status {exit_status}"})
    print_report(result)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    failed = [c for c in result["checks"] if not c["ok"]]
    if args.keep or failed:
        print(f"kept: {root} (minarad.log, ws, remote.git, clone)")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


def soak_for(soak: Soak, args) -> dict:
    """Run every writer for ``args.minutes``, stop them, check; return the figures."""
    ledger = Ledger()
    stop = threading.Event()
    seconds = args.minutes * 60
    hostile = HostileRemote(soak.bare, os.path.join(soak.root, "clone"), ledger, soak.head_has,
                            kinds=args.hostile, start=seconds * 0.05, end=seconds * 0.7,
                            judge_s=args.judge_s, oversize_mb=args.oversize_mb,
                            shared_path=soak.shared_path, pause=args.remote_pause)
    hostile.prepare()
    began = soak.began = time.monotonic()
    workers = [EditorWriter(soak, ledger, i, "rename" if i % 2 == 0 else "inplace")
               for i in range(args.editors)]
    workers += [CliWriter(soak, ledger, i) for i in range(args.cli)]
    workers += [HttpWriter(soak, ledger, i) for i in range(args.http)]
    workers += [McpWriter(soak, ledger, i) for i in range(args.mcp)]
    workers.append(Syncer(soak, ledger, args.sync_every))
    threads = [threading.Thread(target=w.run, args=(stop,), name=w.name, daemon=True)
               for w in workers]
    threads.append(threading.Thread(target=hostile.run, args=(began, stop), name="remote",
                                    daemon=True))
    print(f"soak: {args.minutes:g} min in {soak.root}; hostile kinds: "
          f"{', '.join(args.hostile) or 'none'}", flush=True)
    soak.odd_local_name(b"caf\xe9.md")
    try:
        for t in threads:
            t.start()
        while time.monotonic() - began < seconds and soak.daemon.poll() is None:
            time.sleep(max(0.0, min(1.0, seconds - (time.monotonic() - began))))
            soak.sample_rss()
            if not soak.odd_dir_made and time.monotonic() - began > seconds / 2:
                soak.odd_local_name(b"d\xe9/a.md")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=300)
    elapsed = time.monotonic() - began
    rss = peak_rss_mb(soak.daemon.pid) if soak.daemon.poll() is None else soak.rss_max
    return run_checks(soak, ledger, hostile, elapsed, rss, args.rss_mb)


def stop_daemon(soak: Soak) -> int:
    if soak.daemon.poll() is not None:
        return soak.daemon.returncode
    soak.daemon.send_signal(signal.SIGTERM)
    try:
        return soak.daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        soak.daemon.kill()
        return soak.daemon.wait()


def print_report(result: dict) -> None:
    print(f"\nran {result['seconds']:.0f} s; daemon peak RSS {result['rss_mb']:.0f} MB; "
          "minara's peak RSS by command: " + ", ".join(
              f"{c} {mb:.0f} MB" for c, mb in sorted(result["cli_rss_mb"].items())))
    print(f"{'writer':15} {'acked':>7} {'per s':>7} {'errors':>7}")
    for kind, row in sorted(result["writers"].items()):
        print(f"{kind:15} {row['ok']:7d} {row['rate']:7.1f} {row['errors']:7d}")
    for kind, codes in sorted(result["errors"].items()):
        print(f"errors {kind}: " + ", ".join(f"{c} x{n}" for c, n in sorted(codes.items())))
    for where, message in sorted(result["examples"].items()):
        print(f"  e.g. {where}: {message}")
    for what, n in sorted(result["notes"].items()):
        print(f"{what}: {n}")
    for kind, row in result["hostile"].items():
        print(f"hostile {kind:10} {row['verdict']}; kept on the remote: {row['kept']}"
              f"  ({KIND_DOC[kind]})")
    for check in result["checks"]:
        print(f"{'PASS' if check['ok'] else 'FAIL'} {check['check']}: {check['detail']}")


def parse_kinds(text: str) -> tuple[str, ...]:
    if text == "all":
        return KINDS
    if text in ("", "none"):
        return ()
    kinds = tuple(k.strip() for k in text.split(","))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {unknown}; known: {', '.join(KINDS)}")
    return kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--hostile", type=parse_kinds, default=KINDS,
                        help=f"hostile kinds: all (default), none, or some of {','.join(KINDS)}")
    parser.add_argument("--editors", type=int, default=2, help="even: atomic saves; odd: in place")
    parser.add_argument("--cli", type=int, default=2)
    parser.add_argument("--http", type=int, default=2)
    parser.add_argument("--mcp", type=int, default=1)
    parser.add_argument("--sync-every", type=float, default=5.0, help="seconds between syncs")
    parser.add_argument("--remote-pause", type=float, default=3.0,
                        help="seconds between the other clone's pushes")
    parser.add_argument("--judge-s", type=float, default=30.0,
                        help="how long a hostile kind's next edit may take to arrive")
    parser.add_argument("--oversize-mb", type=int, default=200)
    parser.add_argument("--debounce-ms", type=int, default=300)
    parser.add_argument("--rss-mb", type=float, default=300.0, help="the daemon's RSS bound")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the soak's folder")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())

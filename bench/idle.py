"""Idle cost of the daemon: CPU and thread wake-ups while nothing happens.

Starts a real ``minarad`` (HTTP gateway and MCP over HTTP on, jobs on) on a
fresh workspace, lets it settle, then reads ``/proc/<pid>/stat`` (utime +
stime) and every thread's context switches over the window. The same
numbers for ``sleep`` in the same run are the floor. ``--compare BIN``
measures another install's ``minarad`` (e.g. the previous release's venv)
in the same run.

Usage: python bench/idle.py [--seconds 30] [--compare /path/to/venv/bin]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
TICKS = os.sysconf("SC_CLK_TCK")


def make_env(root: Path) -> dict:
    home = root / "home"
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "MINARA_CONFIG")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), MINARA_WORKSPACE_DIR=str(root / "ws"),
               MINARA_AUTHOR="bench", MINARA_HTTP="127.0.0.1:0",
               MINARA_MCP_HTTP_ENABLED="1", MINARA_MCP_HTTP_PORT="0")
    return env


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (all threads), in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def switches(pid: int) -> int:
    """Context switches of every thread so far (each is a wake-up or a preemption)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as fh:
                for line in fh:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total


def measure(argv: list[str], env: dict, seconds: float, settle: float) -> tuple[float, float]:
    """``(CPU %, wake-ups per second)`` of ``argv`` over ``seconds`` once settled."""
    log = open(Path(env.get("HOME", "/tmp")) / "idle.log", "wb")
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(settle)
        if proc.poll() is not None:
            raise SystemExit(f"{argv[0]} exited: {Path(log.name).read_text()[-2000:]}")
        cpu0, sw0, t0 = cpu_seconds(proc.pid), switches(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu1, sw1, t1 = cpu_seconds(proc.pid), switches(proc.pid), time.monotonic()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
    return 100 * (cpu1 - cpu0) / (t1 - t0), (sw1 - sw0) / (t1 - t0)


def daemon_run(bin_dir: Path, seconds: float, settle: float) -> tuple[float, float]:
    root = Path(tempfile.mkdtemp(prefix="minara-idle-"))
    try:
        env = make_env(root)
        subprocess.run([str(bin_dir / "minara"), "init"], env=env, check=True,
                       capture_output=True)
        return measure([str(bin_dir / "minarad"), "--log-level", "WARNING"], env, seconds,
                       settle)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=8.0,
                        help="seconds after start before measuring (first catch-ups)")
    parser.add_argument("--compare", type=Path, help="another install's bin folder")
    args = parser.parse_args()
    rows = [("sleep (floor)", measure(["sleep", "3600"], dict(os.environ, HOME="/tmp"),
                                      args.seconds, 0.2))]
    rows.append(("minarad (this tree)", daemon_run(BIN, args.seconds, args.settle)))
    if args.compare:
        rows.append((f"minarad ({args.compare})", daemon_run(args.compare, args.seconds,
                                                             args.settle)))
    print(f"idle over {args.seconds:.0f} s, gateway + MCP over HTTP + jobs on:")
    for name, (cpu, wakes) in rows:
        print(f"  {name:<40} CPU {cpu:5.2f} %   wake-ups {wakes:7.1f}/s")


if __name__ == "__main__":
    main()

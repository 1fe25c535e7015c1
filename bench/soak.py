"""Soak the reliability suite before a release: run it, with new random seeds, for N minutes.

Each round runs the model-based store test long (``MINARA_SOAK=1``: many
more and longer random sequences) and then every crash point once more.
The first failing round stops the soak; its full pytest output (with the
minimal failing sequence hypothesis printed) is kept in the log folder.

A round takes several minutes, so the last one may end after the deadline.
``bench/soak_live.py`` soaks a running daemon instead (every kind of writer
and a hostile remote at once).

Run: python bench/soak.py [--minutes 10] [--logs DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ROUND = ["tests/reliability/test_store_model.py", "tests/reliability/test_crash_points.py"]


def run_round(number: int, logs: str) -> tuple[bool, str]:
    """Run one round of the suite; return (passed, log file)."""
    log = os.path.join(logs, f"round-{number:03d}.log")
    env = {**os.environ, "MINARA_SOAK": "1"}
    with open(log, "wb") as fh:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p",
                               "no:cacheprovider", *ROUND], cwd=ROOT, env=env, stdout=fh,
                              stderr=subprocess.STDOUT)
    return proc.returncode == 0, log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--logs", default=None, help="folder for round logs (default: a temp dir)")
    args = parser.parse_args()
    logs = args.logs or tempfile.mkdtemp(prefix="minara-soak-")
    os.makedirs(logs, exist_ok=True)
    deadline = time.monotonic() + args.minutes * 60
    number = 0
    while time.monotonic() < deadline:
        number += 1
        started = time.monotonic()
        passed, log = run_round(number, logs)
        print(f"round {number}: {'ok' if passed else 'FAILED'} in "
              f"{time.monotonic() - started:.0f} s ({log})", flush=True)
        if not passed:
            return 1
    print(f"soak passed: {number} round(s) in {args.minutes:g} min; logs in {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

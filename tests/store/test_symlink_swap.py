"""A folder swapped for a symlink while writes are in flight sends nothing outside."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from minarad.errors import MinaraError
from tests.conftest import assert_repo_sound

#: Renames ``notes`` away, puts a symlink to ``outside`` in its place, takes
#: it out and renames the folder back, in a tight loop until ``stop`` exists.
#: A folder a write created meanwhile is folded back in (newest file wins).
#: The real folder stays in place a moment after each swap, so that some
#: writes get through the path checks and are in flight when the next comes.
SWAPPER = r"""
import os, sys, time

ws, outside, stop = sys.argv[1:4]
real, parked = os.path.join(ws, "notes"), os.path.join(ws, "notes-parked")


def restore():
    while True:
        try:
            os.rename(parked, real)
            return
        except OSError:
            pass
        if os.path.islink(real):
            os.unlink(real)
        elif os.path.isdir(real):
            for name in os.listdir(real):
                if not name.endswith(".minara-tmp"):
                    os.replace(os.path.join(real, name), os.path.join(parked, name))
            try:
                os.rmdir(real)
            except OSError:
                pass


swaps = 0
print("ready", flush=True)
while not os.path.exists(stop):
    try:
        os.rename(real, parked)
    except OSError:
        continue
    try:
        os.symlink(outside, real)
        swaps += 1
    except OSError:
        pass
    restore()
    time.sleep(0.002)
print(swaps, flush=True)
"""


def _start_swapper(ws, outside, stop):
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws), str(outside), str(stop)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    return proc


def _stop_swapper(proc, stop) -> int:
    stop.touch()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    return int(out.strip())


def _temp_files(ws) -> list[str]:
    return [os.path.join(folder, name) for folder, dirs, files in os.walk(ws)
            if ".git" not in folder.split(os.sep) for name in files
            if name.endswith(".minara-tmp")]


@pytest.mark.slow
def test_writes_never_escape_through_a_folder_swapped_for_a_symlink(store, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    store.write("notes/x.md", "x\n", author="a")
    store.write("notes/y.md", "y\n", author="a")
    stop = tmp_path / "stop"
    swapper = _start_swapper(ws, outside, stop)
    done, unclear = 0, []
    try:
        for i in range(80):
            rel = "notes/x.md" if i % 2 else "notes/y.md"
            try:
                if i % 4 == 3:
                    store.append(rel, f"line {i}", author="a")
                else:
                    store.write(rel, f"text {i}\n", author="a")
                done += 1
            except MinaraError:
                pass
            except OSError as exc:
                unclear.append(repr(exc))
    finally:
        swaps = _stop_swapper(swapper, stop)
    assert swaps > 0
    assert sorted(os.listdir(outside)) == []
    assert _temp_files(ws) == []
    assert unclear == []
    assert done > 0
    store.commit_disk()
    assert_repo_sound(ws)

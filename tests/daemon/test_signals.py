"""A signal stops the idle daemon at once, whichever of its threads the kernel hands it to."""

from __future__ import annotations

import ctypes
import os
import signal

import pytest

from tests.daemon.conftest import TIMEOUT

#: tgkill(2) by architecture: send a signal to one thread of a process.
SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), "tgkill failed")


@pytest.mark.skipif(SYS_TGKILL is None, reason="tgkill number unknown on this machine")
def test_sigterm_delivered_to_another_thread_stops_the_idle_daemon(daemon):
    daemon.start()
    pid = daemon.proc.pid
    others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert others
    tgkill(pid, others[-1], signal.SIGTERM)  # not the main thread, which sleeps in the loop
    assert daemon.proc.wait(timeout=TIMEOUT) == 0  # the idle loop sleeps up to 60 s
    assert "stopping: flushing" in daemon.log()

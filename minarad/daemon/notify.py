"""The systemd notify protocol: a few lines over the ``NOTIFY_SOCKET`` datagram socket.

See sd_notify(3). Without a socket (not run by systemd) every call is a no-op.
"""

from __future__ import annotations

import os
import socket
import time

from loguru import logger


def socket_address(path: str) -> str | bytes:
    """Map a ``NOTIFY_SOCKET`` value to a ``sendto`` address (``@name`` is abstract)."""
    if path.startswith("@"):
        return b"\0" + path[1:].encode()
    return path


def watchdog_interval(usec: int | None, pid: int | None, own_pid: int) -> float | None:
    """Return how often to send ``WATCHDOG=1`` (half the timeout), or None.

    Args:
        usec: ``WATCHDOG_USEC`` as set by systemd (None or 0: no watchdog).
        pid: ``WATCHDOG_PID`` when set; the pings are for that process only.
        own_pid: this process's pid.
    """
    if not usec or usec <= 0 or (pid and pid != own_pid):
        return None
    return usec / 2_000_000


class Notifier:
    """Sends state lines to the service manager.

    Args:
        path: the ``NOTIFY_SOCKET`` value, or None outside systemd.
    """

    def __init__(self, path: str | None):
        self.path = path or None
        self._sock = None
        if self.path:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                                       | socket.SOCK_NONBLOCK)

    @property
    def enabled(self) -> bool:
        """True when a service manager listens."""
        return self._sock is not None

    def send(self, *lines: str) -> bool:
        """Send ``KEY=value`` lines as one datagram; return True when sent."""
        if self._sock is None or self.path is None:
            return False
        try:  # never block: a manager that stopped reading must not freeze the commit loop
            self._sock.sendto("\n".join(lines).encode(), socket.MSG_DONTWAIT,
                              socket_address(self.path))
        except OSError as exc:
            logger.debug("sd_notify to {} failed: {}", self.path, exc)
            return False
        return True

    def ready(self, status: str) -> bool:
        """Tell systemd start-up is complete (``READY=1``)."""
        return self.send("READY=1", f"STATUS={status}", f"MAINPID={os.getpid()}")

    def status(self, text: str) -> bool:
        """Update the one-line ``STATUS=`` shown by ``systemctl status``."""
        return self.send(f"STATUS={text}")

    def watchdog(self) -> bool:
        """Ping the service watchdog (``WATCHDOG=1``)."""
        return self.send("WATCHDOG=1")

    def reloading(self) -> bool:
        """Say a configuration reload started (``RELOADING=1``)."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self) -> bool:
        """Say shutdown started (``STOPPING=1``)."""
        return self.send("STOPPING=1", "STATUS=flushing pending edits")

    def close(self) -> None:
        """Close the socket."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

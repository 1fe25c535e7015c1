"""The notify protocol over a real datagram socket, in-process and from minarad."""

import signal
import socket

import pytest

from minarad.daemon.notify import Notifier, watchdog_interval


@pytest.fixture
def listener(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify.sock")
    sock.bind(path)
    sock.settimeout(30)
    yield sock, path
    sock.close()


def receive(sock) -> dict:
    data = sock.recv(4096).decode()
    return dict(line.split("=", 1) for line in data.splitlines())


def test_ready_status_watchdog_stopping(listener):
    sock, path = listener
    notifier = Notifier(path)
    assert notifier.ready("watching /ws")
    assert receive(sock)["READY"] == "1"
    notifier.status("waiting: merge")
    assert receive(sock) == {"STATUS": "waiting: merge"}
    notifier.watchdog()
    assert receive(sock) == {"WATCHDOG": "1"}
    notifier.stopping()
    assert receive(sock)["STOPPING"] == "1"
    notifier.close()


def test_abstract_socket_address():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    name = f"minarad-test-{id(sock)}"
    sock.bind(b"\0" + name.encode())
    sock.settimeout(10)
    try:
        Notifier("@" + name).status("hello")
        assert sock.recv(100) == b"STATUS=hello"
    finally:
        sock.close()


def test_without_a_socket_everything_is_a_no_op():
    notifier = Notifier(None)
    assert not notifier.enabled
    assert not notifier.ready("x")


def test_watchdog_interval_is_half_the_timeout_for_this_pid():
    assert watchdog_interval(10_000_000, None, 42) == 5.0
    assert watchdog_interval(10_000_000, 42, 42) == 5.0
    assert watchdog_interval(10_000_000, 7, 42) is None
    assert watchdog_interval(None, None, 42) is None


def test_minarad_speaks_the_protocol(daemon, listener):
    sock, path = listener
    daemon.start(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"}, wait_ready=False)
    messages = []

    def saw(key):
        while not any(key in m for m in messages):
            messages.append(receive(sock))
        return True

    saw("READY")
    ready = next(m for m in messages if "READY" in m)
    assert ready["STATUS"].startswith("watching ")
    assert int(ready["MAINPID"]) == daemon.proc.pid
    pings = lambda: sum("WATCHDOG" in m for m in messages)  # noqa: E731
    while pings() < 2:
        messages.append(receive(sock))
    daemon.proc.send_signal(signal.SIGTERM)
    saw("STOPPING")
    assert daemon.proc.wait(timeout=30) == 0


def test_a_notify_socket_nobody_reads_never_blocks_the_sender(tmp_path):
    """With the receiver's queue full, sends fail at once (and say so) instead of waiting."""
    import threading

    deaf = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "deaf.sock")
    deaf.bind(path)  # bound, never read
    notifier = Notifier(path)
    outcomes: list[bool] = []

    def flood() -> None:
        for _ in range(5000):  # far more than a datagram queue holds
            outcomes.append(notifier.status("watching /ws; last commit abcdef0 (1 path(s))"))

    sender = threading.Thread(target=flood, daemon=True)
    sender.start()
    sender.join(60)
    try:
        assert not sender.is_alive(), "the notifier blocked on a full socket"
        assert outcomes[0] is True and outcomes[-1] is False
    finally:
        notifier.close()
        deaf.close()

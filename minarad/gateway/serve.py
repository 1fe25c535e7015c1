"""Serving the gateway from ``minarad``: one :data:`~minarad.daemon.main.SERVICES` entry.

The socket is bound first, so a taken port is one clear log line and the
daemon goes on committing. uvicorn then serves in a thread of the daemon;
the address is written to ``<state dir>/gateway/address.json`` so that
``minara ui`` can print the right link (also for ``MINARA_HTTP=...:0``).
"""

from __future__ import annotations

import json
import os
import socket
import threading

from minarad.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    import uvicorn

    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.daemon.core import Daemon
    from minarad.gateway.events import CommitFeed
    from minarad.gateway.library import Library

OFF = ("off", "no", "false", "0", "none", "disabled")


def parse_listen(value: str) -> tuple[str, int] | None:
    """``host:port`` (``[::1]:7411`` for IPv6) -> ``(host, port)``; None for ``off``.

    Raises:
        InvalidInput: not of that form (``invalid_setting``).
    """
    text = value.strip()
    if text.lower() in OFF:
        return None
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise InvalidInput(f"setting http: {value!r} is not host:port (e.g. 127.0.0.1:7411) "
                           f"or off", code="invalid_setting")
    return host, int(port)


def url_for(host: str, port: int) -> str:
    """The URL of a listening address."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (raises OSError when it is taken)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: a response's header and body writes must
    # not wait for the client's delayed ACK (40 ms per keep-alive request).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def address_file(state_dir: str | os.PathLike[str]) -> str:
    """Where the running gateway records its address."""
    from minarad.gateway.security import gateway_dir

    return str(gateway_dir(state_dir) / "address.json")


def record_address(state_dir: str | os.PathLike[str], workspace: str | os.PathLike[str],
                   url: str) -> None:
    """Write ``{"url", "workspace", "pid"}`` for ``minara ui``."""
    from minarad.workspace.files import atomic_write

    data = {"url": url, "workspace": os.path.realpath(workspace), "pid": os.getpid()}
    atomic_write(address_file(state_dir), json.dumps(data).encode())


def running_address(settings: Settings) -> str | None:
    """The URL a running gateway recorded for this workspace, if any."""
    try:
        with open(address_file(settings.state_dir)) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    same = data.get("workspace") == os.path.realpath(settings.workspace)
    return data.get("url") if same and isinstance(data.get("url"), str) else None


def start_gateway(daemon: Daemon, app: Minara) -> Callable[[], None] | None:
    """Serve the HTTP gateway beside the commit loop (``MINARA_HTTP``; ``off`` disables it).

    Returns:
        A callable that stops it, or None when it is off.
    """
    from loguru import logger

    listen = parse_listen(app.settings.http)
    if listen is None:
        return None
    sock = bind(*listen)
    host, port = sock.getsockname()[:2]
    url = url_for(listen[0], port)
    try:
        server, feed, library = _serve(app.settings, sock, url, listen[0])
    except BaseException:
        sock.close()
        raise
    daemon.after_commit.append(feed.wake)
    daemon.on_held.append(feed.held_back)
    record_address(app.settings.state_dir, app.settings.workspace, url)
    logger.info("gateway: {} (minara ui prints a login link; minara token the API token)", url)

    def stop() -> None:
        server.should_exit = True
        feed.stop()
        thread.join(timeout=10)
        library.close()
        sock.close()

    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="minara-gateway", daemon=True)
    thread.start()
    return stop


def _serve(settings: Settings, sock: socket.socket, url: str,
           bind_host: str) -> tuple[uvicorn.Server, CommitFeed, Library]:
    import uvicorn

    from minarad.app import Minara
    from minarad.daemon.quietserver import QuietServer
    from minarad.gateway.limits import guarded_protocol, limit_repeated_logs
    from minarad.gateway.server import build_gateway

    gateway_app = Minara.open(settings)  # its own store: threads never share the daemon's
    asgi, feed = build_gateway(gateway_app, address=url, bind_host=bind_host)
    feed.start()
    limit_repeated_logs()
    config = uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2, server_header=False,
                            http=guarded_protocol(settings.http_max_connections,
                                                  settings.http_header_timeout_s))
    return QuietServer(config), feed, feed.library

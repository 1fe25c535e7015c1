"""The daemon's MCP endpoint: the same tools over streamable HTTP, on loopback, behind a token.

:func:`start` is a daemon service (see ``SERVICES`` in
:mod:`minarad.daemon.main`). With ``mcp_http_enabled`` it binds
``mcp_http_host:mcp_http_port`` (loopback only), serves
``http://HOST:PORT/mcp`` with uvicorn in a thread of its own, and wakes the
resource change feed from the daemon's ``after_commit`` hook. Every request
must carry ``Authorization: Bearer <token>``: the ``mcp_token`` setting if
set, else the HTTP gateway's token (``minara token``; a rotation takes
effect at once); the SDK's DNS-rebinding check refuses foreign
``Host``/``Origin`` headers. Where it
listens is written to ``.git/minara/mcp-http.json`` (no secret in it).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from minarad.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from minarad.app import Minara
    from minarad.config import Settings
    from minarad.daemon.core import Daemon

ENDPOINT_FILE = "mcp-http.json"
PATH = "/mcp"


def token_source(settings: Settings) -> Callable[[], str]:
    """What gives the token a request must carry: the ``mcp_token`` setting, else the
    gateway's token file, re-read when it changes (``minara token --rotate``)."""
    if settings.mcp_token:
        configured = settings.mcp_token
        return lambda: configured
    from minarad.gateway.security import TokenSource

    return TokenSource(settings.state_dir).current


def token_matches(given: str | None, expected: str) -> bool:
    """True when ``given`` is ``expected`` (constant-time comparison)."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


class BearerGate:
    """ASGI middleware: HTTP requests without the bearer token get 401.

    Args:
        app: the ASGI application behind the gate.
        token: returns the token a request must carry (asked at each request).
    """

    def __init__(self, app: ASGIApp, token: Callable[[], str]):
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            body = json.dumps({"error": "unauthorized", "message": "missing or wrong bearer "
                               "token (see: minara token)"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="minara"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = value.decode("latin-1").partition(" ")
                return scheme.lower() == "bearer" and token_matches(given.strip(), self.token())
        return False


def check_loopback(host: str) -> str:
    """Return ``host`` if it is a loopback address or ``localhost``, else raise."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise InvalidInput(f"mcp_http_host {host!r}: the MCP endpoint listens on loopback only "
                       f"(127.0.0.1, ::1 or localhost)", code="invalid_setting")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"MCP endpoint: cannot listen on {host}:{port}: {exc.strerror}",
                           code="address_in_use") from None
    sock.listen(128)
    return sock


def endpoint_url(host: str, port: int) -> str:
    """``http://host:port/mcp`` (IPv6 hosts bracketed)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATH}"


def read_endpoint(git_state_dir: Path) -> dict | None:
    """What a running daemon wrote about its MCP endpoint, or None."""
    try:
        return json.loads((Path(git_state_dir) / ENDPOINT_FILE).read_text())
    except (OSError, ValueError):
        return None


class HttpEndpoint:
    """uvicorn serving the MCP app in a thread; :meth:`stop` ends it."""

    def __init__(self, asgi: ASGIApp, sock: socket.socket, record: Path):
        import uvicorn

        from minarad.daemon.quietserver import QuietServer

        self.sock = sock
        self.record = record
        config = uvicorn.Config(asgi, log_level="warning", lifespan="on", access_log=False)
        self.server = QuietServer(config)
        self.thread = threading.Thread(target=self._serve, name="minara-mcp-http", daemon=True)

    def _serve(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self) -> HttpEndpoint:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wait for the thread, forget the endpoint file."""
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        with_missing_ok(self.record.unlink)


def with_missing_ok(call: Callable[[], object]) -> None:
    try:
        call()
    except FileNotFoundError:
        pass


def start(daemon: Daemon, app: Minara) -> Callable[[], None] | None:
    """Daemon service: serve MCP over streamable HTTP when ``mcp_http_enabled``.

    Returns:
        A callable that stops the endpoint, or None when it is disabled.
    """
    settings = app.settings
    if not settings.mcp_http_enabled:
        return None
    from loguru import logger

    from minarad.app import Minara
    from minarad.mcp.library import AgentTools
    from minarad.mcp.server import build_server

    host = check_loopback(settings.mcp_http_host)
    token = token_source(settings)
    tools = AgentTools(Minara.open(settings), settings.author)  # its own store: own locks
    server, feed = build_server(tools, poll_s=None)  # the daemon wakes it after each move
    asgi = BearerGate(server.streamable_http_app(streamable_http_path=PATH, host=host), token)
    sock = bind(host, settings.mcp_http_port)
    port = sock.getsockname()[1]
    record = Path(app.store.state_dir) / ENDPOINT_FILE
    record.write_text(json.dumps({"url": endpoint_url(host, port), "pid": os.getpid()}) + "\n")
    endpoint = HttpEndpoint(asgi, sock, record).start()
    daemon.after_commit.append(feed.wake)
    logger.info("MCP over HTTP at {} (bearer token required)", endpoint_url(host, port))

    def stop() -> None:
        endpoint.stop()
        tools.close()
    return stop

"""The gateway's front door (ASGI middleware): Host, size, who is asking, CSRF, headers.

In this order, before any handler runs:

1. the ``Host`` header must name this server (no DNS rebinding);
2. a body larger than the limit is refused (413) before it is read whole;
3. the caller is the bearer-token holder (``Authorization: Bearer``) or a
   browser with a signed session cookie; anyone else gets 401 (the login
   page, the static files and the OpenAPI document are public);
4. a browser's state-changing request must carry its session's CSRF token
   in ``X-CSRF-Token`` and, if it sends ``Origin``, come from this origin;
5. every response gets a strict Content-Security-Policy and friends.
"""

from __future__ import annotations

import json
import urllib.parse

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from minarad.gateway import security

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minarad.gateway.security import TokenSource

SESSION_COOKIE = "minara_session"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PUBLIC_PATHS = ("/login", "/v1/openapi.json", "/favicon.ico")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


class BodyTooLarge(Exception):
    """The request body went past the limit while it was read."""


def host_name(value: str | None) -> str | None:
    """The host part of a ``Host`` header (``[::1]:80`` -> ``::1``), lower-cased."""
    if not value:
        return None
    try:
        parsed = urllib.parse.urlsplit("//" + value.strip())
        return (parsed.hostname or "").lower() or None
    except ValueError:
        return None


def allowed_hosts(bind_host: str, extra: str) -> frozenset[str]:
    """The names a request's ``Host`` may carry: loopback, the bound address, the extras."""
    names = {*LOOPBACK_NAMES, bind_host.strip("[]").lower()}
    names.update(h.strip().lower() for h in extra.split(",") if h.strip())
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(names)


class Guard:
    """ASGI middleware applying the checks above.

    Args:
        app: the wrapped ASGI application.
        tokens: the :class:`~minarad.gateway.security.TokenSource`.
        hosts: the allowed ``Host`` names.
        max_body: the largest request body, in bytes.
        larger_bodies: ``(method, path) -> limit`` for the few requests that may be
            larger (a file upload up to ``files_max_bytes``).
        too_large: ``(method, path) -> (code, message)`` answering a body over the
            limit of such a request (an upload's ``file_too_large``), instead of
            ``request_too_large``.
    """

    def __init__(self, app: ASGIApp, *, tokens: TokenSource, hosts: frozenset[str],
                 max_body: int,
                 larger_bodies: dict[tuple[str, str], int] | None = None,
                 too_large: dict[tuple[str, str], tuple[str, str]] | None = None):
        self.app = app
        self.tokens = tokens
        self.hosts = hosts
        self.max_body = max_body
        self.larger_bodies = dict(larger_bodies or {})
        self.too_large = dict(too_large or {})

    def body_limit(self, scope: Scope) -> int:
        """The largest body this request may have."""
        return self.larger_bodies.get((scope.get("method", ""), scope.get("path", "")),
                                      self.max_body)

    def body_refusal(self, scope: Scope) -> tuple[int, str, str]:
        """The 413 answer to a body over :meth:`body_limit`."""
        code, message = self.too_large.get(
            (scope.get("method", ""), scope.get("path", "")),
            ("request_too_large", f"the request body is over {self.body_limit(scope):,} bytes"))
        return 413, code, message

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        send = _with_security_headers(send)
        refusal = self._check(scope)
        if refusal is not None:
            return await _refuse(scope, send, *refusal)
        limit = self.body_limit(scope)
        try:
            await self.app(scope, self._limited(receive, limit), send)
        except BodyTooLarge:
            await _refuse(scope, send, *self.body_refusal(scope))

    def _check(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = Headers(scope=scope)
        if host_name(headers.get("host")) not in self.hosts:
            return 403, "host_not_allowed", "this server does not answer to that Host name"
        length, limit = headers.get("content-length"), self.body_limit(scope)
        if length is not None and not length.isdigit():
            return 413, "request_too_large", f"the request body is over {limit:,} bytes"
        if length is not None and int(length) > limit:
            return self.body_refusal(scope)
        return self._check_caller(scope, headers)

    def _check_caller(self, scope: Scope, headers: Headers) -> tuple[int, str, str] | None:
        token = self.tokens.current()
        state = scope.setdefault("state", {})
        state["identity"], state["csrf"] = None, ""
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            if not security.same_secret(auth[7:].strip(), token):
                return 401, "invalid_token", "the bearer token is not this server's"
            state["identity"] = "bearer"
            return None
        nonce = security.session_nonce(token, _cookie(headers, SESSION_COOKIE))
        if nonce is None:
            if _is_public(scope["path"]):
                return None
            return 401, "unauthorized", ("send Authorization: Bearer <token> (minara token), "
                                         "or open the login link that `minara ui` prints")
        state["identity"], state["csrf"] = "session", security.csrf_token(token, nonce)
        if scope["method"] not in SAFE_METHODS:
            return self._check_csrf(headers, state["csrf"])
        return None

    def _check_csrf(self, headers: Headers, expected: str) -> tuple[int, str, str] | None:
        if not security.same_secret(headers.get("x-csrf-token", ""), expected):
            return 403, "csrf_failed", "missing or wrong X-CSRF-Token; reload the page"
        origin = headers.get("origin")
        if origin and origin != "null" and host_name(urllib.parse.urlsplit(origin).netloc) \
                not in self.hosts:
            return 403, "csrf_failed", "the request came from another site"
        if origin and urllib.parse.urlsplit(origin).netloc.lower() != \
                (headers.get("host") or "").lower():
            return 403, "csrf_failed", "the request came from another origin"
        return None

    def _limited(self, receive: Receive, limit: int) -> Receive:
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return message

        return wrapped


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith("/static/")


def _cookie(headers: Headers, name: str) -> str | None:
    from http.cookies import CookieError, SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


def _with_security_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {k.lower() for k, _ in headers}
            headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            if b"cache-control" not in present:
                headers.append((b"cache-control", b"no-store"))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _refuse(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    """Answer with the error: JSON for the API, a short page for a browser."""
    path = scope.get("path", "")
    if path.startswith("/v1/") or status != 401:
        body = json.dumps({"error": code, "message": message}).encode()
        ctype = b"application/json"
    else:
        from minarad.gateway.pages import login_needed_html

        body, ctype = login_needed_html().encode(), b"text/html; charset=utf-8"
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="minara"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

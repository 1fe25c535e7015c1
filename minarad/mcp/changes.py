"""Resource change notifications: which resource files a commit changed, and who hears it.

:class:`ChangeFeed` remembers the committed blob of each resource file.
When HEAD moves (it polls HEAD, and the daemon wakes it from its
``after_commit`` hook), it compares again and announces every changed file
twice over, for both generations of MCP clients:

- to ``subscriptions/listen`` streams (protocol 2026-07-28), through the
  server's subscription bus;
- to sessions that sent ``resources/subscribe`` for that URI (earlier
  protocols, which most harnesses speak), as ``notifications/resources/updated``.

Only a commit notifies: an editor's unsaved (uncommitted) change does not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcp.server.session import ServerSession

URI_PREFIX = "minara://workspace/"


def resource_uri(path: str) -> str:
    """The MCP resource URI of workspace file ``path``."""
    return URI_PREFIX + path


class ChangeFeed:
    """Announce committed changes of resource files.

    Args:
        blobs: awaits ``{path: committed blob id or None}``.
        head: awaits the HEAD commit.
        publish: publishes a URI to ``subscriptions/listen`` streams.
        poll_s: how often HEAD is looked at; None: only when woken (in the
            daemon, whose HEAD follower wakes it after every move of HEAD).
    """

    def __init__(self, blobs: Callable[[], Awaitable[dict]],
                 head: Callable[[], Awaitable[str | None]],
                 publish: Callable[[str], Awaitable[None]], poll_s: float | None):
        self._blobs = blobs
        self._head = head
        self._publish = publish
        self.poll_s = poll_s
        self._known: dict | None = None
        self._head_seen: str | None = None
        self._sessions: dict[str, set[ServerSession]] = {}
        self._wake: anyio.Event | None = None
        self._loop: Any = None

    # -- earlier protocols: resources/subscribe ------------------------------------

    def subscribe(self, uri: str, session: ServerSession) -> None:
        """Remember that ``session`` wants ``notifications/resources/updated`` for ``uri``."""
        self._sessions.setdefault(uri, set()).add(session)

    def unsubscribe(self, uri: str, session: ServerSession) -> None:
        """Forget a ``resources/subscribe``."""
        self._sessions.get(uri, set()).discard(session)

    # -- the loop --------------------------------------------------------------------

    async def run(self) -> None:
        """Poll HEAD (or wait to be woken) and announce changes until cancelled."""
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._known = await self._blobs()
        self._head_seen = await self._head()
        self._wake = anyio.Event()
        while True:
            with anyio.move_on_after(self.poll_s):
                await self._wake.wait()
            self._wake = anyio.Event()  # before looking: a wake during the look is kept
            await self.check()

    def wake(self, _commit: object = None) -> None:
        """Look at HEAD now (thread-safe; the daemon's ``after_commit`` hook calls this)."""
        wake, loop = self._wake, self._loop
        if wake is None or loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(wake.set)
        except RuntimeError:  # the loop has just ended
            pass

    async def check(self) -> list[str]:
        """Announce every resource file whose committed blob changed; return their paths."""
        head = await self._head()
        if head == self._head_seen:
            return []
        self._head_seen = head
        blobs = await self._blobs()
        old, self._known = self._known or {}, blobs
        changed = [path for path, blob in blobs.items() if old.get(path) != blob]
        for path in changed:
            await self._announce(resource_uri(path))
        return changed

    async def _announce(self, uri: str) -> None:
        await self._publish(uri)
        for session in list(self._sessions.get(uri, ())):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # noqa: BLE001 - a closed session is simply forgotten
                self.unsubscribe(uri, session)

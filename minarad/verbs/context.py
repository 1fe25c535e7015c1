"""The memory blocks of a session's system prompt, as every surface builds them."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minarad.app import Minara
    from minarad.context import Context


def session_context(app: Minara, *, now: dt.datetime | None = None, channel: str | None = None,
                    session: str | None = None, surface: str | None = None,
                    max_file_chars: int | None = None, max_total_chars: int | None = None,
                    agent: str | None = None, role: str | None = None,
                    measure: bool = False) -> Context:
    """Build the memory blocks of a session's system prompt.

    Args:
        app: the workspace (a brand-new one is created and seeded first).
        now: the time to act as of (default now, local).
        channel: the channel whose MEMORY.md is shown.
        session: the agent's session id.
        surface: where the agent runs.
        max_file_chars: per-file budget (default: the setting).
        max_total_chars: total budget (default: the setting).
        agent: the agent's id: its working memory (``agents/<id>/NOTES.md``) is shown.
        role: the agent's role: only policies of domains it may read are shown
            (``general`` when None).
        measure: only to measure the files against their budgets (``minara
            status``, ``context --report``, the daemon's budget watch): the
            policies block (it holds no file) is left out, and SOUL.md's
            baseline is left as it is, so the one-time notice of a changed
            SOUL.md still reaches the next session.

    Returns:
        The :class:`minarad.context.Context`.
    """
    from minarad.context import build_context
    from minarad.workspace.paths import channel_path

    if not app.has_repository():
        app.set_up()
    budgets = app.context_budgets(max_file_chars, max_total_chars)
    notes = None
    if agent:
        from minarad.knowledge.notes import notes_path

        notes = notes_path(agent)
    policies = ""
    if not measure:  # straight from disk: the knowledge library stays unloaded
        from minarad.knowledge.prompt import policies_block_text

        policies = policies_block_text(app.root, role, budgets.max_file_chars,
                                       app.settings.max_file_bytes)
    return build_context(app.root, now=now or dt.datetime.now().astimezone(),
                         channel_memory=channel_path("MEMORY.md", channel), session=session,
                         surface=surface, channel=channel, budgets=budgets,
                         max_file_bytes=app.settings.max_file_bytes, policies=policies,
                         notes_path=notes, disclose_soul=not measure)

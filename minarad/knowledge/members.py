"""Channel membership: ``channels/<id>/MEMBERS.md`` lists who may use a channel's memory.

The file is plain Markdown, versioned and editable by hand; every bullet
line names one member (a person or an agent id), the first word counts::

    # Members of team-a

    - dana
    - agent-a (the deploy agent)

A channel without the file keeps the open behaviour: anyone who names it
may use it. Kept light (no store, no click): the click-free ``memory get``
checks it too; :func:`change_members` reaches the store only through the
:class:`~minarad.knowledge.service.Knowledge` it is given.
"""

from __future__ import annotations

import os
import re

from minarad.errors import Forbidden, InvalidInput, NotFound

_BULLET_RE = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?`?([^\s`(,]+)")
_HEADING = "# Members of {channel}\n\n"


def members_path(channel: str) -> str:
    """``channels/<id>/MEMBERS.md`` (the channel id checked)."""
    from minarad.workspace.paths import validate_channel

    return f"channels/{validate_channel(channel)}/MEMBERS.md"


def parse_members(text: str) -> list[str]:
    """The members a MEMBERS.md names, in order, without repeats (outside code fences)."""
    found: dict[str, None] = {}
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        match = None if fence else _BULLET_RE.match(line)
        if match:
            found.setdefault(match.group(1), None)
    return list(found)


def render_members(channel: str, members: list[str], old_text: str | None = None) -> str:
    """MEMBERS.md listing ``members``: the old file's other lines are kept, bullets replaced."""
    bullets = "".join(f"- {m}\n" for m in members)
    if not old_text:
        return _HEADING.format(channel=channel) + bullets
    kept = [line for line in old_text.splitlines(keepends=True) if not _BULLET_RE.match(line)]
    body = "".join(kept).rstrip("\n")
    return (body + "\n\n" if body else "") + bullets


def read_members(root: str | os.PathLike, channel: str, max_bytes: int) -> list[str] | None:
    """The members of ``channel``, or None when it has no MEMBERS.md (open channel).

    Raises:
        Forbidden: the file is there but minara may not read it (a symlink...):
            the channel is treated as closed (``access_denied``).
    """
    from minarad.workspace.reader import read_workspace_text

    path = members_path(channel)
    try:
        return parse_members(read_workspace_text(root, path, max_bytes=max_bytes))
    except NotFound:
        return None
    except (Forbidden, InvalidInput) as exc:
        raise Forbidden(f"channel {channel}: its members file cannot be read ({exc.message}); "
                        f"access is refused until it can", code="access_denied",
                        channel=channel) from None


def check_channel_access(root: str | os.PathLike, channel: str | None, who: str,
                         max_bytes: int) -> None:
    """Refuse ``who`` a channel whose MEMBERS.md does not list them.

    Args:
        root: the workspace.
        channel: the channel named (None: nothing to check).
        who: the caller (an agent id or a person).
        max_bytes: the largest file read.

    Raises:
        Forbidden: ``access_denied`` (exit 5).
    """
    if channel is None:
        return
    members = read_members(root, channel, max_bytes)
    if members is not None and who not in members:
        raise Forbidden(f"{who} is not a member of channel {channel} "
                        f"({members_path(channel)}); nothing is shown",
                        code="access_denied", channel=channel, who=who)


def change_members(knowledge, channel: str, *, add=(), remove=(), author: str,
                   source: str = "cli") -> list[str]:
    """Add and remove members of ``channel`` (creating MEMBERS.md); one commit.

    Args:
        knowledge: the workspace's :class:`~minarad.knowledge.service.Knowledge`.
        channel: the channel id.
        add: members to add (one word each), in order, at the end.
        remove: members to take out.
        author: who changes the list (the commit's author).
        source: the surface (``cli``, ``http``...).

    Returns:
        The members now. Nothing is committed when the list did not change.

    Raises:
        InvalidInput: a member name is not one word (``invalid_member``).
    """
    from minarad.knowledge.changes import blob_of

    path = members_path(channel)
    try:
        text: str | None = knowledge.app.read_text(path)
    except NotFound:
        text = None
    members = parse_members(text or "")
    for who in add:
        check_member_name(who)
        if who not in members:
            members.append(who)
    members = [m for m in members if m not in set(remove)]
    new_text = render_members(channel, members, text)
    if new_text != text:
        with knowledge.store.transaction(author=author, source=source,
                                         message=f"members of channel {channel}") as tx:
            tx.write(path, new_text, base=None if text is None else blob_of(text))
        knowledge.follow(tx)
    return members


def check_member_name(who: str) -> None:
    """Refuse a member name that is not one word (``invalid_member``)."""
    if parse_members(f"- {who}") != [who]:
        raise InvalidInput(f"member {who!r}: one word (a person or an agent id)",
                           code="invalid_member")

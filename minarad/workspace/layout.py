"""The files of a workspace and their roles (OpenClaw-compatible layout)."""

from __future__ import annotations

import re

#: Files seeded from templates, in the order a new workspace shows them.
SEEDED_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md", "TOOLS.md")
#: Seeded only into a brand-new workspace; archived when onboarding is done.
BOOTSTRAP = "BOOTSTRAP.md"
#: Written by the turn-end job; never seeded.
HEARTBEAT = "HEARTBEAT.md"
#: Files that belong to one machine and are git-ignored.
LOCAL_STATE = (".soul-state.json",)

ROLES = {
    "SOUL.md": "soul",
    "AGENTS.md": "agents",
    "IDENTITY.md": "identity",
    "USER.md": "user",
    "MEMORY.md": "memory",
    "BOOTSTRAP.md": "bootstrap",
    "TOOLS.md": "tools",
    "HEARTBEAT.md": "heartbeat",
}

_JOURNAL = re.compile(r"^memory/\d{4}-\d{2}-\d{2}(-[^/]+)?\.md$")
_CHANNEL_MEMORY = re.compile(r"^channels/[^/]+/MEMORY\.md$")


def role_of(path: str) -> str:
    """Return the role of a workspace-relative path (``other`` when unknown)."""
    if path in ROLES:
        return ROLES[path]
    if _JOURNAL.match(path):
        return "journal"
    if _CHANNEL_MEMORY.match(path):
        return "channel_memory"
    if path.startswith("wiki/") and path.endswith(".md"):
        return "wiki"
    if path.startswith("learn/") and path.endswith(".jsonl"):
        return "learn"
    if path.startswith("knowledge/"):
        return "knowledge"
    return "other"


def is_memory_path(path: str) -> bool:
    """True for the files ``minara memory search`` covers."""
    return role_of(path) in ("memory", "journal", "channel_memory", "learn")

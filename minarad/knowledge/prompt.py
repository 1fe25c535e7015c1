"""The policies block of ``minara context``: active policies, by domain. Pure text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.knowledge.grants import Grants, role_of

if TYPE_CHECKING:  # parse_record is imported where a policy file is read
    from minarad.knowledge.records import KnowledgeRecord

HEADER = ("Active policies: rules this agent follows, reviewed by people. Only active "
          "policies the role {role} may read are listed; `minara policy list` shows all.")


def policies_block_text(root, role: str | None, max_chars: int, max_bytes: int) -> str:
    """The text of ``minara context``'s policies block, read from disk (see
    :func:`read_active_policies` and :func:`policies_text`)."""
    policies, problems = read_active_policies(root, role, max_bytes)
    return policies_text(policies, role, max_chars, problems)


def policies_text(policies: list[KnowledgeRecord], role: str | None, max_chars: int,
                  problems: tuple[str, ...] | list[str] = ()) -> str:
    """One ``## domain`` heading per domain, a bullet per policy (id, topic, content).

    Policies beyond ``max_chars`` are named by id only, so the agent can read
    them; policy files that could not be read are named with file and line.
    """
    if not policies and not problems:
        return ""
    parts, used, skipped = [HEADER.format(role=role_of(role)), ""], 0, []
    domain = None
    for policy in policies:
        body = policy.content.strip().replace("\n", "\n  ")
        line = f"- [{policy.id}] {policy.topic}: {body}"
        if used + len(line) > max_chars:
            skipped.append(policy.id)
            continue
        if policy.domain != domain:
            domain = policy.domain
            parts += ["", f"## {domain}"] if used else [f"## {domain}"]
        parts.append(line)
        used += len(line)
    if skipped:
        parts += ["", f"Not inlined (over the {max_chars:,}-character budget): "
                      f"{', '.join(skipped)}; read them with `minara policy show ID`."]
    if problems:
        parts += [""] if parts[-1] else []
        parts += ["Not read (fix these files by hand):"] + [f"- {p}" for p in problems]
    return "\n".join(parts) + "\n"


def read_active_policies(root, role: str | None, max_bytes: int
                         ) -> tuple[list[KnowledgeRecord], list[str]]:
    """The active, not superseded policies ``role`` may read, straight from disk,
    and the policy files (of those domains) that are not valid records.

    ``minara context`` runs at every session start and must stay light (no
    SQLite, no dulwich), so it walks ``knowledge/*/policies/`` instead of
    the catalogue: policies are few. Files minara may not read, and files
    that are not valid records, are named (``path:line: reason``) instead.
    Sorted by domain, then topic.
    """
    import os

    from minarad.errors import MinaraError
    from minarad.knowledge.records import RecordError, parse_record
    from minarad.workspace.reader import read_workspace_text

    def read(rel: str) -> str | None:
        try:
            return read_workspace_text(root, rel, max_bytes=max_bytes)
        except MinaraError:
            return None

    try:  # no policy is shown until the grants can be read
        hidden = _readable_grants(root, max_bytes).hidden_domains(role)
    except MinaraError as err:
        return [], [f"{err.message.removesuffix('; fix it by hand')}; every policy is "
                    f"withheld until it is fixed"]
    found, problems = [], []
    for domain in _folders(os.path.join(root, "knowledge")):
        if domain in hidden or domain.startswith(("_", ".")):
            continue
        for name in _files(os.path.join(root, "knowledge", domain, "policies")):
            rel = f"knowledge/{domain}/policies/{name}"
            text = read(rel)
            try:
                policy = parse_record(rel, text) if text is not None else None
            except RecordError as exc:
                problems.append(str(exc.problem))
                continue
            if policy is None:
                problems.append(f"{rel}:1: minara may not read it (not a regular UTF-8 file)")
            elif policy.active and not policy.superseded:
                found.append(policy)
    return sorted(found, key=lambda p: (p.domain, p.topic, p.id)), problems


def _readable_grants(root, max_bytes: int) -> Grants:
    """The grants table (none yet: every read allowed).

    Raises:
        MinaraError: ``grants.json`` cannot be read (invalid, a symlink, too large).
    """
    from minarad.errors import NotFound
    from minarad.knowledge.grants import GRANTS_PATH, parse_grants
    from minarad.workspace.reader import read_workspace_text

    try:
        return parse_grants(read_workspace_text(root, GRANTS_PATH, max_bytes=max_bytes))
    except NotFound:
        return Grants()


def _folders(path: str) -> list[str]:
    import os

    try:
        with os.scandir(path) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _files(path: str) -> list[str]:
    import os

    try:
        with os.scandir(path) as entries:
            return sorted(e.name for e in entries
                          if e.name.endswith(".md") and e.is_file(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []

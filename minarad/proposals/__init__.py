"""Proposals: changes a job prepares on a git branch for a person to accept or reject.

A proposal is a branch ``proposals/<job>/<YYYY-MM-DD>-<n>`` holding ONE
commit on top of the workspace branch's head at the time, authored by the
job, whose message says why. Stock git reads it (``git branch --list
'proposals/*'``, ``git log``, ``git diff main...proposals/...``). Nothing
applies a proposal by itself:

- :meth:`Proposals.accept` brings its changes into the workspace through the
  store's transaction, as ONE merge commit (parents: the workspace head and
  the proposal). A file that moved on since the proposal was made is merged
  three ways (merge3) with the rule ``memory push`` uses: where lines clash,
  both sides' lines are kept, the workspace's first. The branch is then
  deleted.
- :meth:`Proposals.reject` deletes the branch; its commit stays reachable
  from the branch's reflog for git's usual expiry (90 days). Job state in
  :data:`KEEP_ON_REJECT` (the dream watermark) is still written, so what a
  rejected job read is not read again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import re
from typing import TYPE_CHECKING

from minarad.errors import InvalidInput, MinaraError, NotFound

if TYPE_CHECKING:
    from minarad.store.store import Store

PREFIX = "proposals/"

#: Job state a rejected proposal still writes: the dream watermark, so the
#: journals a rejected dream read are not dreamed again.
KEEP_ON_REJECT = (".dreamed-state.json",)
_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]*/\d{4}-\d{2}-\d{2}-\d+")
_JOB_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")


class ProposalNotFound(NotFound):
    code = "proposal_not_found"


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One open proposal.

    Attributes:
        id: ``<job>/<YYYY-MM-DD>-<n>`` (the branch without ``proposals/``).
        branch: the git branch, ``proposals/<id>``.
        job: the job that made it.
        commit: the proposal's commit.
        base: the workspace commit it was made on.
        author: the job's author name (``job:<name>``).
        message: why (the commit message).
        created: when, ISO 8601.
        paths: the files it changes.
    """

    id: str
    branch: str
    job: str
    commit: str
    base: str | None
    author: str
    message: str
    created: str
    paths: tuple[str, ...]

    def as_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["paths"] = list(self.paths)
        return data


@dataclasses.dataclass(frozen=True)
class Accepted:
    """What accepting did: the merge commit, the files, and those merged three ways."""

    proposal: Proposal
    commit: str | None
    paths: tuple[str, ...]
    merged: tuple[str, ...]
    clashes: int

    def as_dict(self) -> dict:
        return {"proposal": self.proposal.as_dict(), "commit": self.commit,
                "paths": list(self.paths), "merged": list(self.merged), "clashes": self.clashes}


class Proposals:
    """The proposals of one workspace's repository.

    Args:
        store: the workspace's :class:`minarad.store.Store`.
    """

    def __init__(self, store: Store):
        self.store = store

    # -- reading -----------------------------------------------------------------

    def list_open(self, job: str | None = None) -> list[Proposal]:
        """Open proposals, oldest first (by id: job, date, number)."""
        from minarad.git.branches import list_branches

        prefix = PREFIX + (f"{job}/" if job else "")
        found = [self._load(name, sha) for name, sha in list_branches(self.store.repo,
                                                                       prefix).items()]
        return sorted((p for p in found if p is not None), key=_sort_key)

    def get(self, proposal_id: str) -> Proposal:
        """The open proposal ``proposal_id`` (``proposals/`` prefix optional)."""
        from minarad.git.branches import branch_commit

        pid = _clean_id(proposal_id)
        sha = branch_commit(self.store.repo, PREFIX + pid)
        found = self._load(PREFIX + pid, sha) if sha else None
        if found is None:
            raise ProposalNotFound(f"no open proposal {pid} (minara proposals list shows them)",
                                   id=pid)
        return found

    def files(self, proposal: Proposal) -> dict[str, tuple[str | None, str | None]]:
        """``{path: (text at base, proposed text)}``; None where a side has no file."""
        return {path: (self._text_at(proposal.base, path), self._text_at(proposal.commit, path))
                for path in proposal.paths}

    def diff(self, proposal_id: str) -> str:
        """The proposal's change as a unified diff against the commit it was made on."""
        proposal = self.get(proposal_id)
        out: list[str] = []
        for path, (old, new) in self.files(proposal).items():
            out.extend(difflib.unified_diff(
                (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if old is not None else "/dev/null",
                tofile=f"b/{path}" if new is not None else "/dev/null"))
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in out)

    def open_for(self, job: str, path: str) -> list[Proposal]:
        """Open proposals of ``job`` that change ``path``."""
        return [p for p in self.list_open(job) if path in p.paths]

    # -- writing -----------------------------------------------------------------

    def create(self, job: str, changes: dict[str, str | None], message: str, *,
               author: str | None = None, when: dt.datetime | None = None) -> Proposal:
        """File ``changes`` (path -> new text, None to delete) as a new proposal.

        The commit is made on the workspace branch's head; the workspace and
        its branch are not touched.

        Raises:
            InvalidInput: no change, a bad job name, or a path the store refuses.
        """
        from minarad.workspace.content import encode_text

        if not _JOB_RE.fullmatch(job):
            raise InvalidInput(f"job name {job!r}: use lowercase letters, digits, - and _",
                               code="invalid_job")
        if not message.strip():
            raise InvalidInput("a proposal needs a message saying why", code="empty_message")
        store = self.store
        who = author or f"job:{job}"
        now = when or dt.datetime.now().astimezone()
        with store.lock():  # HEAD stays where the paths are checked until the branch exists
            head = store.head()
            blobs: dict[str, bytes | None] = {}
            for path, text in changes.items():
                rel = store.check_writable_path(path)
                if text is None:
                    if self._text_at(head, rel) is None:
                        raise InvalidInput(f"{rel} does not exist; nothing to delete",
                                           code="file_not_found")
                    blobs[rel] = None
                    continue
                blobs[rel] = encode_text(text, store.max_file_bytes, rel)
            if not blobs:
                raise InvalidInput("a proposal needs at least one change", code="empty_proposal")
            commit = store.commit_beside(blobs, author=who, message=message.rstrip("\n") + "\n",
                                         when=int(now.timestamp()))
            for _ in range(100):
                pid = f"{job}/{now.date().isoformat()}-{self._next_number(job, now.date())}"
                try:
                    store.create_branch(PREFIX + pid, commit, who=who,
                                        message=f"proposal: {message.splitlines()[0][:72]}")
                except MinaraError as exc:
                    if exc.code == "branch_exists":
                        continue
                    raise
                return self.get(pid)
        raise MinaraError("could not name the proposal", code="proposal_name")

    def accept(self, proposal_id: str, *, author: str) -> Accepted:
        """Bring the proposal into the workspace as ONE merge commit; delete its branch.

        A file unchanged in the workspace since the proposal was made takes
        the proposed text; one that moved on is merged three ways, keeping
        both sides where lines clash (the workspace's first).
        """
        from minarad.store.merge import merge_texts

        proposal = self.get(proposal_id)
        store = self.store
        head = store.head()
        merged, clashes, paths = [], 0, []
        with store.transaction(author=author, source="proposal", parents=[proposal.commit],
                               message=f"accept proposal {proposal.id}: "
                                       f"{proposal.message.splitlines()[0]}") as tx:
            for path, (base_text, new_text) in self.files(proposal).items():
                current = self._text_at(head, path)
                if current == base_text:
                    result = new_text
                elif new_text is None or current is None:
                    # deleted on one side and edited on the other: keep the text
                    result = current if new_text is None else new_text
                    merged.append(path)
                else:
                    outcome = merge_texts(base_text or "", current, new_text)
                    result, clashes = outcome.text, clashes + outcome.conflicts
                    merged.append(path)
                if result == current:
                    continue
                paths.append(path)
                if result is None:
                    tx.delete(path)
                else:
                    tx.write(path, result)
        commit = tx.result.commit if paths and tx.result else None
        self._delete(proposal, author, "accepted")
        return Accepted(proposal, commit, tuple(paths), tuple(merged), clashes)

    def reject(self, proposal_id: str, *, author: str) -> Proposal:
        """Delete the proposal's branch; its commit stays reachable from the reflog."""
        proposal = self.get(proposal_id)
        kept = {path: new for path, (_old, new) in self.files(proposal).items()
                if path in KEEP_ON_REJECT and new is not None}
        if kept:
            with self.store.transaction(author=author, source="proposal",
                                        message=f"reject proposal {proposal.id}: keep "
                                                f"{', '.join(sorted(kept))}") as tx:
                for path, text in kept.items():
                    tx.write(path, text)
        self._delete(proposal, author, "rejected")
        return proposal

    # -- helpers -----------------------------------------------------------------

    def _delete(self, proposal: Proposal, author: str, verb: str) -> None:
        self.store.delete_branch(proposal.branch, proposal.commit, who=author,
                                 message=f"proposal {verb} by {author}")

    def _next_number(self, job: str, day: dt.date) -> int:
        import os

        from minarad.git.branches import list_branches

        stem = f"{PREFIX}{job}/{day.isoformat()}-"
        taken = {int(name[len(stem):]) for name in list_branches(self.store.repo, stem)
                 if name[len(stem):].isdigit()}
        logs = os.path.join(self.store.repo.commondir(), "logs", "refs", "heads",
                            *PREFIX.rstrip("/").split("/"), job)
        try:  # a rejected or accepted proposal's number is not given again
            taken |= {int(n[len(day.isoformat()) + 1:]) for n in os.listdir(logs)
                      if n.startswith(day.isoformat() + "-")
                      and n[len(day.isoformat()) + 1:].isdigit()}
        except OSError:
            pass
        return max(taken, default=0) + 1

    def _load(self, branch: str, sha: str | None) -> Proposal | None:
        from minarad.git.commits import author_name
        from minarad.git.diff import diff_commit
        from minarad.store.models import iso_time

        if sha is None:
            return None
        pid = branch[len(PREFIX):]
        if not _ID_RE.fullmatch(pid):
            return None
        commit = self.store.repo.object_store[sha.encode()]
        parents = list(commit.parents)
        changes = diff_commit(self.store.repo.object_store, commit, parents[:1])
        paths = tuple(sorted({c.path for c in changes}))
        return Proposal(id=pid, branch=branch, job=pid.split("/", 1)[0], commit=sha,
                        base=parents[0].decode() if parents else None,
                        author=author_name(commit.author),
                        message=commit.message.decode("utf-8", "replace").rstrip("\n"),
                        created=iso_time(commit.author_time, commit.author_timezone),
                        paths=paths)

    def _text_at(self, commit: str | None, path: str) -> str | None:
        from minarad.git.objects import read_blob
        from minarad.git.trees import lookup_blob
        from minarad.workspace.content import decode_text

        if commit is None:
            return None
        tree = self.store.repo.object_store[commit.encode()].tree
        found = lookup_blob(self.store.repo.object_store, tree, path.encode())
        if found is None:
            return None
        return decode_text(read_blob(self.store.repo.object_store, found[1].decode()),
                           self.store.max_file_bytes, path)


def _clean_id(proposal_id: str) -> str:
    pid = proposal_id.strip()
    if pid.startswith(PREFIX):
        pid = pid[len(PREFIX):]
    if not _ID_RE.fullmatch(pid):
        raise InvalidInput(f"{proposal_id!r} is not a proposal id (like dream/2026-11-30-1)",
                           code="invalid_proposal_id")
    return pid


def _sort_key(p: Proposal):
    job, rest = p.id.split("/", 1)
    day, number = rest.rsplit("-", 1)
    return (day, job, int(number))

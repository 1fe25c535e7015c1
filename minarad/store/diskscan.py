"""Committing what is on disk: what the daemon and a reconcile call.

A whole-tree scan trusts the stat data in ``.git/index`` (see
:mod:`minarad.store.reconcile`), so it costs by change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minarad.errors import Forbidden
from minarad.store.models import CommitInfo
from minarad.workspace.paths import check_no_symlink

if TYPE_CHECKING:
    from typing import Any


class DiskCommits:
    """Committing what is on disk: one path, some, or the whole tree (mixed into Store)."""

    if TYPE_CHECKING:  # a mixin of Store: the rest of Store's attributes, for the checker
        def __getattr__(self, name: str) -> Any: ...

    # -- committing what is on disk ----------------------------------------------

    def commit_disk(self, paths=None, *, author: str | None = None,
                    source: str = "editor",
                    message: str | None = None, skipped: list | None = None
                    ) -> CommitInfo | None:
        """Commit what is on disk for ``paths`` (None: the whole tree) in one commit.

        A path missing on disk is a deletion. With ``paths=None`` the tree is
        scanned, and deletions are committed only if the scan had no errors.
        Files that cannot be versioned (over the size limit, unreadable) are
        left out and named in the returned ``skipped``, and appended to the
        ``skipped`` list when one is given (also when nothing is committed).

        Returns:
            The commit, or None when disk already equals HEAD.
        """
        from minarad.store.reconcile import DiskChanges

        with self.lock():
            self.check_writable()
            self.catch_up()
            found = DiskChanges()
            if paths is None:
                self._scan_whole_tree(found)
            else:
                self._scan_paths(paths, found)
            if skipped is not None:
                skipped.extend(found.skipped)
            if not found.changes:
                return None
            info = self.commit_changes(found.changes, found.stats, author=author or self.operator,
                                source=source, message=message,
                                verb=self._disk_verb(found.changes))
            return CommitInfo(info.commit, info.paths, info.source, info.author,
                              tuple(found.skipped))

    def _disk_verb(self, changes: dict) -> str | None:
        """``add`` when every changed path is new, else None (derived from the changes)."""
        def is_new(rel):
            latest = self.history_db.latest(rel)
            return latest is None or latest.blob is None

        return "add" if all(d is not None and is_new(r) for r, d in changes.items()) else None

    def _scan_paths(self, paths, found) -> None:
        from minarad.store import reconcile

        ignore = self.ignore_filter()
        for rel in sorted({reconcile.normalized_or_as_given(p) for p in paths}):
            if not ignore(rel):
                latest = self.history_db.latest(rel)
                reconcile.collect(self, rel, latest.blob if latest else None, True, found,
                                  latest.mode if latest else None)

    def _scan_whole_tree(self, found) -> None:
        from minarad.store import reconcile
        from minarad.workspace.ignore import scan_tree

        links: list[str] = []
        on_disk, errors = scan_tree(self.root, self.ignore_filter(), links)
        found.skipped += [self._symlink_reason(rel) for rel in sorted(links)]
        entries = self._committed_entries()
        committed = {rel: blob for rel, (blob, _mode) in entries.items()}
        clean = reconcile.unchanged_by_stat(str(self.git_dir / "index"), on_disk, committed)
        for rel in sorted((set(on_disk) | set(committed)) - clean):
            blob, mode = entries.get(rel, (None, None))
            reconcile.collect(self, rel, blob, not errors, found, mode)

    def _symlink_reason(self, rel: str) -> str:
        try:
            check_no_symlink(str(self.root), rel)
        except Forbidden as exc:
            return exc.message
        return f"{rel}: a symlink; minara does not follow links"

    def _committed_files(self) -> dict[str, str]:
        return {rel: blob for rel, (blob, _mode) in self._committed_entries().items()}

    def _committed_entries(self) -> dict[str, tuple[str, int]]:
        """HEAD's files: ``path -> (blob hex, mode)``."""
        from minarad.git.objects import commit_tree
        from minarad.git.trees import iter_files

        head = self.head()
        if head is None:
            return {}
        tree = commit_tree(self.repo, head)
        return {p.decode("utf-8", "surrogateescape"): (sha.decode(), mode)
                for p, mode, sha in iter_files(self.repo.object_store, tree)}



"""Purge: erase files from every commit of the workspace's history.

For content that must not be kept (a leaked secret, personal data): unlike
a delete, which is a commit that keeps every old version, a purge rewrites
every commit that ever held the files, empties the reflogs and removes the
objects no ref reaches any more, so the text is in no object of the
repository afterwards. It cannot be undone. Other clones still hold the old
commits, and a push of the rewritten branch is refused as not a
fast-forward; a workspace with a remote is therefore refused unless
``force`` is given.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.store.models import Record

if TYPE_CHECKING:
    from minarad.store.store import Store


@dataclasses.dataclass(frozen=True)
class PurgeResult(Record):
    """What a purge did: the paths, the refs it moved, the objects it removed."""

    paths: tuple
    refs_rewritten: dict
    objects_removed: int
    head: str | None


def purge_paths(store: Store, paths: list[str], *, force: bool = False) -> PurgeResult:
    """Erase ``paths`` from every commit, reflog and object of the repository.

    The files are removed from disk and from ``.git/index``; the history
    cache starts over from the new history. Texts a version conflict kept
    for these paths (``.git/minara/rejected``) are removed too.

    Args:
        store: the workspace's :class:`minarad.store.Store`.
        paths: workspace paths to erase.
        force: purge even when the repository has a remote configured.

    Raises:
        Forbidden: a remote is configured and ``force`` is not given
            (``purge_with_remote``).
        InvalidInput: no path was given.
    """
    from minarad.git.rewrite import expire_reflogs, prune_unreachable, rewrite_without_paths

    rels = sorted({store.check_path(p) for p in paths})
    if not rels:
        raise InvalidInput("nothing to purge: give at least one path", code="invalid_input")
    with store.lock():
        store.check_writable()
        refuse_with_remote(store, force)
        store.catch_up()
        _remove_from_disk(store, rels)
        moved = rewrite_without_paths(store.repo, rels)
        expire_reflogs(os.fspath(store.git_dir))
        head = store.head()
        _index_to_head(store, rels, head)
        removed = prune_unreachable(store.repo, keep=_index_blobs(store))
        _remove_rejected(store, rels)
        store.close()
        store.catch_up()
    return PurgeResult(tuple(rels), {k.decode(): v[1].decode() for k, v in moved.items()},
                       removed, head)


def purge_blobs(store: Store, plan: Callable[[Store], tuple[dict, dict]], *,
                force: bool = False) -> PurgeResult:
    """Replace blobs in every commit (a value erased from a file's every version).

    ``plan(store)``, called under the lock, returns ``(mapping, files)``:
    old blob id -> new blob id (bytes, the new blobs stored), and the files
    on disk to rewrite (path -> bytes). The commits that held a blob are
    written again, reflogs emptied, ``.git/index`` rebuilt from the new HEAD
    and the old objects removed, as for :func:`purge_paths`.

    Raises:
        Forbidden: a remote is configured and ``force`` is not given
            (``purge_with_remote``).
        NotFound: ``plan`` found nothing to replace.
    """
    from minarad.git.rewrite import expire_reflogs, prune_unreachable, rewrite_blobs
    from minarad.store.commit import update_index
    from minarad.workspace.files import write_file_at

    with store.lock():
        store.check_writable()
        refuse_with_remote(store, force)
        store.catch_up()
        mapping, files = plan(store)
        if not mapping and not files:
            raise NotFound("nothing to purge: no commit and no file holds it",
                           code="purge_nothing_found")
        for rel, data in files.items():
            write_file_at(store.root, rel, data)
        moved = rewrite_blobs(store.repo, mapping)
        expire_reflogs(os.fspath(store.git_dir))
        head = store.head()
        if head is not None:
            update_index(store, {}, store.repo[head.encode()].tree, rebuild=True)
        removed = prune_unreachable(store.repo, keep=_index_blobs(store))
        store.close()
        store.catch_up()
    return PurgeResult(tuple(sorted(files)), {k.decode(): v[1].decode()
                                              for k, v in moved.items()}, removed, head)


def refuse_with_remote(store: Store, force: bool = False) -> None:
    """Refuse a purge of a workspace that has a remote, unless ``force``.

    Callers that change anything before purging ask this first, so a
    refused purge leaves the workspace as it was.

    Raises:
        Forbidden: a remote is configured and ``force`` is not given
            (``purge_with_remote``).
    """
    from minarad.git.rewrite import remote_names

    remotes = remote_names(store.repo)
    if remotes and not force:
        raise Forbidden(f"this workspace has a remote ({', '.join(remotes)}): a purge "
                        f"rewrites history that its clones still hold, and a later push "
                        f"is refused; give --force to purge anyway",
                        code="purge_with_remote", remotes=remotes)


def _remove_from_disk(store: Store, rels: list[str]) -> None:
    """Commit any editor change first (so nothing else is lost), then unlink the files."""
    from minarad.workspace.files import remove_file_at

    for rel in rels:
        store.absorb(rel)
        data, _ = store.read_disk(rel)
        if data is not None:
            remove_file_at(store.root, rel)


def _index_to_head(store: Store, rels: list[str], head: str | None) -> None:
    """Take the purged paths out of ``.git/index`` (the rest already matches HEAD)."""
    from minarad.store.commit import update_index

    if head is None:
        return
    tree = store.repo[head.encode()].tree
    update_index(store, {rel.encode("utf-8"): None for rel in rels}, tree)


def _index_blobs(store: Store) -> set[bytes]:
    """The blobs ``.git/index`` names (kept even if no commit reaches them)."""
    from minarad.git.index import IndexFormatUnsupported, read_stat_entries

    try:
        with open(store.git_dir / "index", "rb") as fh:
            entries = read_stat_entries(fh.read())
    except (OSError, IndexFormatUnsupported):
        return set()
    return {value[0].encode() for value in entries.values()}


def _remove_rejected(store: Store, rels: list[str]) -> None:
    folder = store.state_dir / "rejected"
    if not folder.is_dir():
        return
    endings = tuple("-" + rel.replace("/", "__") for rel in rels)
    for entry in os.listdir(folder):
        if entry.endswith(endings):
            os.remove(folder / entry)

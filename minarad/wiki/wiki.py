"""The wiki: pages at paths, their versions, links and backlinks.

``Wiki(app)`` (or ``Wiki(store, index=...)``) is what the CLI, the HTTP
gateway and the MCP server call. Every change goes through the store (one
commit each; a move is one transaction), every read of a page's text
through the store's read path, and backlinks come from the link table
(:mod:`minarad.wiki.linktable`), never from a scan of the wiki.

Visibility: a workspace page is seen by everyone; a channel's page only
by a caller naming that channel. For that caller a channel page hides a
workspace page of the same name, and ``[[name]]`` in a channel page names
the channel's page when there is one.
"""

from __future__ import annotations

import builtins
import os

from minarad.errors import InvalidInput, MinaraError, NotFound, VersionConflict
from minarad.wiki.linktable import LinkRow, LinkTable
from minarad.wiki.models import (Backlink, MoveResult, OutLink, Page, PageInfo, PageWrite,
                                 TreeNode)
from minarad.wiki.names import check_name, default_title, page_file, page_of_file
from minarad.wiki.text import keep_front_matter, title_of, with_title


class Wiki:
    """The wiki of one workspace.

    Args:
        app_or_store: a :class:`minarad.app.Minara` (its store and index are
            used) or a :class:`minarad.store.Store`.
        index: the search index when a store is given (search needs one).
    """

    def __init__(self, app_or_store, *, index=None):
        self._app = app_or_store if hasattr(app_or_store, "settings") else None
        self._store = None if self._app is not None else app_or_store
        self._index = index
        self._table: LinkTable | None = None

    # -- parts -----------------------------------------------------------------

    @property
    def store(self):
        """The workspace's store."""
        return self._app.store if self._app is not None else self._store

    @property
    def index(self):
        """The search index (the app's, opened on first use)."""
        if self._index is None and self._app is not None:
            self._index = self._app.index
        if self._index is None:
            raise MinaraError("this wiki was opened without a search index",
                              code="no_index")
        return self._index

    @property
    def table(self) -> LinkTable:
        """The link table, brought up to HEAD."""
        if self._table is None:
            self._table = LinkTable(self.store.root, self.store.git_dir)
        if not self._table.is_current():
            self._table.catch_up()
        return self._table

    def reading_table(self) -> LinkTable:
        """The link table for a read, its answers those of HEAD.

        In the daemon, whose follower records each commit soon after it is
        made, a commit that touched no page leaves the table as it is: the
        reader neither diffs nor waits for the follower. Elsewhere the table
        is brought up to HEAD (as :attr:`table`), so that the next process
        reads it without dulwich.
        """
        if self._table is None:
            self._table = LinkTable(self.store.root, self.store.git_dir)
        table = self._table
        if not table.is_current() and not (table.followed()
                                           and table.pages_unchanged(self.store.repo)):
            table.catch_up()
        return table

    def close(self) -> None:
        """Close the link table (the store and index belong to their owner)."""
        if self._table is not None:
            self._table.close()
            self._table = None

    # -- resolving names -------------------------------------------------------

    def _exists(self, rel: str) -> bool:
        return os.path.isfile(os.path.join(self.store.root, *rel.split("/")))

    def file_for_reading(self, name: str, channel: str | None = None, *,
                         history: bool = False) -> str:
        """The file a caller of ``channel`` reads as page ``name``: the channel's page
        if there is one, else the workspace's. A deleted channel page is named when
        there is no workspace page, or when ``history`` (to list or restore its versions)."""
        if channel:
            own, shared = page_file(name, channel), page_file(name)
            if self._exists(own):
                return own
            if (history or not self._exists(shared)) and self._has_history(own):
                return own
        return page_file(name)

    def _has_history(self, rel: str) -> bool:
        store = self.store
        store.catch_up_for_reading()
        return store.history_db.count(rel) > 0

    # -- listing -----------------------------------------------------------------

    def list(self, prefix: str = "", *, channel: str | None = None) -> builtins.list[PageInfo]:
        """The pages a caller of ``channel`` sees, in tree order (``prefix``: that page and
        those under it). A channel page hides a workspace page of the same name."""
        return [PageInfo(name, chan, title, file)
                for file, chan, name, title in self.page_rows(prefix, channel=channel)]

    def page_rows(self, prefix: str = "", *, channel: str | None = None) -> builtins.list:
        """As :meth:`list`, as plain ``(file, channel, name, title)`` tuples (cheap for
        10,000 pages)."""
        from minarad.wiki.linktable import visible_pages
        from minarad.workspace.paths import validate_channel

        if channel:
            validate_channel(channel)
        return visible_pages(self.reading_table(), channel,
                             check_name(prefix) if prefix else "")

    def tree(self, prefix: str = "", *, channel: str | None = None) -> builtins.list[TreeNode]:
        """The pages as a tree of segments (folders without a page have no title)."""
        pages = self.list(prefix, channel=channel)
        root: dict = {}
        titles = {p.name: p.title for p in pages}
        for page in pages:
            node = root
            for segment in page.name.split("/"):
                node = node.setdefault(segment, {})
        return _nodes(root, "", titles)

    # -- reading -----------------------------------------------------------------

    def get(self, name: str, *, version=None, channel: str | None = None,
            backlinks: bool = True) -> Page:
        """Page ``name`` now (or at ``version``) with the pages linking to it.

        Raises:
            NotFound: no such page for this caller (``wiki_page_not_found``),
                or no such version.
        """
        name = check_name(name)
        rel = self.file_for_reading(name, channel)
        try:
            text, info = self.store.read(rel, version)
        except NotFound as exc:
            raise self._not_found(name, rel, exc) from None
        links = tuple(self.backlinks(name, channel=channel)) if backlinks else ()
        return Page(name, _channel_of(rel), title_of(text, name), rel, text, info.version,
                    info.commit, info.author, info.time, info.blob_id, links)

    def _not_found(self, name: str, rel: str, exc: NotFound) -> NotFound:
        if exc.code == "file_not_found" and exc.details.get("deleted_in"):
            restore = exc.details.get("restore_version")
            return NotFound(f"page {name} was deleted in version {exc.details['deleted_in']}; "
                            f"bring it back with: minara wiki restore {name} {restore}",
                            code="wiki_page_not_found", path=name, file=rel,
                            deleted_in=exc.details["deleted_in"], restore_version=restore)
        if exc.code == "file_not_found":
            return NotFound(f"page {name} does not exist", code="wiki_page_not_found",
                            path=name)
        return exc

    def backlinks(self, name: str, *, channel: str | None = None) -> builtins.list[Backlink]:
        """The pages the caller sees that link to page ``name``, by name.

        One entry per linking page (its first link to ``name``).
        """
        from minarad.wiki.linktable import visible_backlinks

        name = check_name(name)
        page_channel = _channel_of(self.file_for_reading(name, channel))
        return [Backlink(*row) for row in visible_backlinks(self.reading_table(), name,
                                                            page_channel,
                                                            channel)]

    def links(self, name: str, *, channel: str | None = None) -> builtins.list[OutLink]:
        """The ``[[links]]`` of page ``name`` as committed, each marked existing or missing."""
        name = check_name(name)
        rel = self.file_for_reading(name, channel)
        table = self.table
        if table.page(rel) is None and not self._exists(rel):
            raise NotFound(f"page {name} does not exist", code="wiki_page_not_found", path=name)
        return [self._out_link(table, row) for row in table.links_from(rel)]

    def missing(self, *, channel: str | None = None) -> builtins.list[OutLink]:
        """Every link (from pages the caller sees) to a page that does not exist."""
        table = self.table
        return [self._out_link(table, row) for row in table.missing_links(channel)]

    def _out_link(self, table: LinkTable, row: LinkRow) -> OutLink:
        source = page_of_file(row.source)
        source_name = source[0] if source else row.source
        for space in ((row.channel, "") if row.channel else ("",)):
            if table.page_exists(row.target, space):
                return OutLink(source_name, row.target, row.label, row.line, True,
                               page_file(row.target, space or None))
        return OutLink(source_name, row.target, row.label, row.line, False, None)

    def history(self, name: str, *, channel: str | None = None) -> builtins.list:
        """Every version of page ``name``, newest first (:class:`HistoryEntry` records)."""
        name = check_name(name)
        rel = self.file_for_reading(name, channel, history=True)
        try:
            return self.store.history(rel)
        except NotFound:
            raise NotFound(f"page {name} has no history: it never existed",
                           code="wiki_page_not_found", path=name) from None

    def diff(self, name: str, old, new=None, *, channel: str | None = None) -> str:
        """A unified diff of page ``name`` from version ``old`` to ``new`` (default: now)."""
        return self.store.diff(self.file_for_reading(check_name(name), channel, history=True),
                               old, new)

    def search(self, query: str, *, channel: str | None = None, limit: int = 10,
               catch_up: bool = True) -> builtins.list:
        """Pages matching ``query``, best first, with snippets (index hits).

        Only wiki pages the caller sees are searched, one hit (the best section)
        per page; the index catches up first.
        """
        index = self.index
        if catch_up:
            index.catch_up(wait=5.0)
        hits = index.search(query, path="wiki/", limit=limit)
        if channel:
            hits += index.search(query, path=f"channels/{channel}/wiki/", channel=channel,
                                 limit=limit)
            hits.sort(key=lambda h: -h.score)
        best: dict[str, object] = {}
        for hit in hits:  # one hit per page: its best section
            if page_of_file(hit.path) is not None and hit.path not in best:
                best[hit.path] = hit
        return list(best.values())[:limit]

    # -- writing -----------------------------------------------------------------

    def put(self, name: str, text: str, *, title: str | None = None, base=None,
            channel: str | None = None, author: str, source: str = "cli") -> PageWrite:
        """Create page ``name`` or save a new version of it (one commit).

        A text without front matter keeps the page's front matter; ``title``
        sets the title line (every other byte of the front matter stays).

        Raises:
            VersionConflict: ``base`` is not the page's current version
                (``wiki_version_conflict``); the refused text is kept and named.
        """
        name = check_name(name)
        rel = page_file(name, channel)
        old = self._current_text(rel)
        text = keep_front_matter(text, old)
        if title is not None:
            text = with_title(text, _checked_title(title))
        verb = "create" if old is None else "save"
        return self._write(name, rel, text, base=base, author=author, source=source,
                           message=f"{verb} wiki page {name}")

    def rename(self, name: str, title: str, *, base=None, channel: str | None = None,
               author: str, source: str = "cli") -> PageWrite:
        """Give page ``name`` a new title (its path stays): a new version."""
        name = check_name(name)
        rel = self.file_for_reading(name, channel)
        old = self._current_text(rel)
        if old is None:
            raise NotFound(f"page {name} does not exist", code="wiki_page_not_found", path=name)
        return self._write(name, rel, with_title(old, _checked_title(title)), base=base,
                           author=author, source=source,
                           message=f"retitle wiki page {name}: {title.strip()}")

    def _current_text(self, rel: str) -> str | None:
        try:
            return self.store.read(rel)[0]
        except NotFound:
            return None

    def _write(self, name: str, rel: str, text: str, *, base, author: str, source: str,
               message: str) -> PageWrite:
        try:
            result = self.store.write(rel, text, base=base, author=author, source=source,
                                      message=message)
        except VersionConflict as exc:
            raise VersionConflict(exc.message.replace(rel, f"page {name} ({rel})", 1),
                                  code="wiki_version_conflict", **exc.details) from None
        self._refresh()
        return PageWrite(name, _channel_of(rel), title_of(text, name), rel, result.version,
                         result.changed, result.commit, result.previous_version)

    def _refresh(self) -> None:
        """Bring the link table to the commit just made (readers then need no dulwich)."""
        self.table  # noqa: B018 - the property catches the table up

    def delete(self, name: str, *, base=None, channel: str | None = None, author: str,
               source: str = "cli") -> PageWrite:
        """Delete page ``name`` in a commit (pages under it stay; restore brings it back)."""
        name = check_name(name)
        rel = self.file_for_reading(name, channel)
        if not self._exists(rel):
            raise NotFound(f"page {name} does not exist", code="wiki_page_not_found", path=name)
        result = self.store.delete(rel, base=base, author=author, source=source)
        self._refresh()
        return PageWrite(name, _channel_of(rel), default_title(name), rel, result.version,
                         result.changed, result.commit, result.previous_version)

    def restore(self, name: str, version, *, channel: str | None = None, author: str,
                source: str = "cli") -> PageWrite:
        """Bring back version ``version`` of page ``name`` as a new version."""
        name = check_name(name)
        rel = self.file_for_reading(name, channel, history=True)
        result = self.store.restore(rel, version, author=author, source=source)
        self._refresh()
        text = self._current_text(rel) or ""
        return PageWrite(name, _channel_of(rel), title_of(text, name), rel, result.version,
                         result.changed, result.commit, result.previous_version)

    def move(self, old: str, new: str, *, fix_links: bool = False, channel: str | None = None,
             author: str, source: str = "cli") -> MoveResult:
        """Move page ``old`` and every page under it to ``new`` in ONE commit.

        Links to the old names are left as they are (they now name missing
        pages) unless ``fix_links``: then every ``[[old...]]`` link is
        rewritten in the same commit.

        Raises:
            NotFound: there is no page at or under ``old``.
            InvalidInput: a page would land on an existing one
                (``wiki_page_exists``) or inside itself; nothing moves.
        """
        old, new = check_name(old), check_name(new)
        if new == old or new.startswith(old + "/"):
            raise InvalidInput(f"cannot move {old} to {new}: a page cannot move under itself",
                               code="wiki_move_into_itself", path=old)
        pairs = self._subtree(old, new, channel)
        taken = [n for _, n in pairs if self._exists(page_file(n, channel))]
        if taken:
            raise InvalidInput(f"cannot move {old} to {new}: page {taken[0]} exists already"
                               + (f" (and {len(taken) - 1} more)" if len(taken) > 1 else "")
                               + "; nothing was moved", code="wiki_page_exists",
                               path=taken[0], existing=taken)
        rewrites = self._link_rewrites(pairs, channel) if fix_links else {}
        moved = {page_file(o, channel): page_file(n, channel) for o, n in pairs}
        message = f"move wiki page {old} -> {new}" + (f" ({len(pairs)} pages)"
                                                     if len(pairs) > 1 else "")
        if rewrites:
            message += f"; links rewritten in {len(rewrites)} page(s)"
        verb = _move_verb(page_file(old, channel), page_file(new, channel), moved, rewrites)
        with self.store.transaction(author=author, source=source, message=message,
                                    verb=verb) as tx:
            for src, dst in moved.items():
                tx.rename(src, dst)
            for rel, (text, version) in rewrites.items():
                tx.write(moved.get(rel, rel), text, base=None if rel in moved else version)
        self._refresh()
        _remove_empty_folders(self.store.root, page_file(old, channel)[:-len(".md")])
        fixed = tuple(sorted(_name_of(moved.get(rel, rel)) for rel in rewrites))
        assert tx.result is not None
        return MoveResult(tx.result.commit, tuple(pairs), fixed)

    def _subtree(self, old: str, new: str, channel: str | None) -> builtins.list[tuple[str, str]]:
        """``(old name, new name)`` of page ``old`` and every page file under its folder."""
        pairs = [(old, new)] if self._exists(page_file(old, channel)) else []
        folder = page_file(old, channel)[:-len(".md")]
        top = os.path.join(self.store.root, *folder.split("/"))
        for here, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]
            below = os.path.relpath(here, top).replace(os.sep, "/")
            for file in sorted(files):
                if not file.endswith(".md") or os.path.islink(os.path.join(here, file)):
                    continue
                sub = file[:-3] if below == "." else f"{below}/{file[:-3]}"
                if page_of_file(f"{folder}/{sub}.md") is not None:
                    pairs.append((f"{old}/{sub}", f"{new}/{sub}"))
        if not pairs:
            raise NotFound(f"page {old} does not exist (nor any page under it)",
                           code="wiki_page_not_found", path=old)
        return sorted(pairs)

    def _link_rewrites(self, pairs, channel: str | None) -> dict[str, tuple[str, int]]:
        """file -> (rewritten text, version read) for every page linking to a moved name."""
        from minarad.workspace.links import link_rewriter

        table, space = self.table, channel or ""
        sources: set[str] = set()
        for old, _ in pairs:
            for row in table.links_to_any(old):
                if space and row.channel != space:
                    continue
                if not space and row.channel and table.page_exists(old, row.channel):
                    continue
                sources.add(row.source)
        rewrite = link_rewriter({f"wiki/{old}.md": f"wiki/{new}.md" for old, new in pairs})
        out = {}
        for rel in sorted(sources):
            text, info = self.store.read(rel)
            new_text = rewrite(text, rel)
            if new_text != text:
                out[rel] = (new_text, info.version)
        return out

    def purge(self, name: str, *, channel: str | None = None, yes: bool = False,
              force: bool = False):
        """Erase page ``name`` from the whole history (see :func:`minarad.store.purge.purge_paths`).

        Raises:
            InvalidInput: ``yes`` was not given (``purge_not_confirmed``).
            Forbidden: the workspace has a remote and ``force`` was not given.
        """
        from minarad.store.purge import purge_paths

        name = check_name(name)
        rel = self.file_for_reading(name, channel)
        if not yes:
            raise InvalidInput(f"purging page {name} rewrites every commit that held {rel} "
                               f"and cannot be undone; confirm with --yes",
                               code="purge_not_confirmed", path=name)
        if not self._exists(rel) and not self._has_history(rel):
            raise NotFound(f"page {name} does not exist and never did",
                           code="wiki_page_not_found", path=name)
        result = purge_paths(self.store, [rel], force=force)
        self.close()
        if self._app is not None or self._index is not None:
            self._rebuild_index_after_purge()
        return result

    def _rebuild_index_after_purge(self) -> None:
        """The search index held the page's text: start it over from the new history."""
        try:
            self.index.rebuild()
        except MinaraError:
            pass


def _remove_empty_folders(root, folder: str) -> None:
    """Remove the folders a move emptied, innermost first (git keeps no folders)."""
    top = os.path.join(root, *folder.split("/"))
    if os.path.islink(top) or not os.path.isdir(top):
        return
    for here, _dirs, _files in os.walk(top, topdown=False):
        try:
            os.rmdir(here)
        except OSError:
            pass


def _channel_of(rel: str) -> str:
    page = page_of_file(rel)
    return page[1] if page else ""


def _name_of(rel: str) -> str:
    page = page_of_file(rel)
    return page[0] if page else rel


def _checked_title(title: str) -> str:
    if not title.strip() or "\n" in title or "\r" in title:
        raise InvalidInput(f"title {title!r}: give one line of text", code="invalid_title")
    return title.strip()


def _nodes(level: dict, parent: str, titles: dict) -> builtins.list[TreeNode]:
    out = []
    for segment in sorted(level):
        name = f"{parent}/{segment}" if parent else segment
        out.append(TreeNode(segment, name, titles.get(name),
                            tuple(_nodes(level[segment], name, titles))))
    return out


def _move_verb(top_old: str, top_new: str, moved: dict[str, str], rewrites: dict) -> str:
    """A move's commit words, with or without link fixes: one vocabulary.

    ``rename wiki/a.md -> wiki/b.md`` (one page), ``move wiki/a/ -> wiki/b/
    (N files)`` (the pages under a, with ``wiki/a.md, `` first when a is a
    page too), then ``, fixing links in N files`` when links were rewritten.
    """
    if len(moved) == 1:
        (src, dst), = moved.items()
        verb = f"rename {src} -> {dst}"
    else:
        old_dir, new_dir = top_old[:-len(".md")] + "/", top_new[:-len(".md")] + "/"
        pages = top_old in moved
        verb = (f"move {top_old + ', ' if pages else ''}{old_dir} -> "
                f"{top_new + ', ' if pages else ''}{new_dir} ({len(moved)} files)")
    if rewrites:
        verb += f", fixing links in {len(rewrites)} file{'s' if len(rewrites) > 1 else ''}"
    return verb

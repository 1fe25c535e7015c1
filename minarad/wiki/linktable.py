"""The wiki's pages and links, kept in step with git (a cache, never the truth).

An SQLite file beside the repository (``.git/minara/wiki.sqlite3``) holds
one row per page (file, channel, name, title) and one per ``[[link]]`` of a
page (source file, the source's channel, target name, label, line). It
remembers the commit it reflects; catching up diffs that commit's tree
with HEAD's, so it costs by change, and a commit it no longer knows (a
purge rewrote history) makes it start over from HEAD's tree. Deleting the
file is always safe.

Reading needs no dulwich: :meth:`LinkTable.is_current` compares the
recorded commit with HEAD read from ``.git`` directly, and the queries are
plain SQL, so ``minara wiki get`` stays fast.
"""

from __future__ import annotations

import os

try:  # the C module alone: ``sqlite3`` also imports datetime (10 ms of the fast get)
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - an interpreter without it
    import sqlite3  # type: ignore[no-redef]  # the same API, with the Python wrapper

from minarad.wiki.names import WIKI_FOLDER, is_page_folder, link_target_name, page_of_file
from minarad.workspace.headtable import FollowsHead

FILE_NAME = "wiki.sqlite3"
#: Bumped when the tables change; a table of another version is started over.
SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS pages (
    file TEXT PRIMARY KEY, channel TEXT NOT NULL, name TEXT NOT NULL, title TEXT NOT NULL,
    blob TEXT NOT NULL, own_title INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS pages_name ON pages (name, channel);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL, channel TEXT NOT NULL, target TEXT NOT NULL, label TEXT NOT NULL,
    line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS links_target ON links (target);
CREATE INDEX IF NOT EXISTS links_source ON links (source);
"""


def _no_waiting_for_disk(conn: sqlite3.Connection) -> None:
    """A cache's catch-up need not wait for the disk: WAL, synced at checkpoints.

    A power cut loses at most the last catch-ups (the recorded commit goes back with
    them, so the next catch-up makes them again); WAL keeps the file whole. A file
    that cannot switch now (another connection holds it, a read-only folder) keeps
    its journal: slower, as correct.
    """
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError:
        pass
    conn.execute("PRAGMA synchronous=NORMAL")


class PageRow:
    """A page as the table knows it (a plain class: the fast ``wiki get`` defines no
    namedtuple or dataclass)."""

    __slots__ = ("file", "channel", "name", "title")

    def __init__(self, file: str, channel: str, name: str, title: str):
        self.file, self.channel, self.name, self.title = file, channel, name, title


class LinkRow:
    """One ``[[link]]`` of a page: its source file, the source's channel, target, label, line."""

    __slots__ = ("source", "channel", "target", "label", "line")

    def __init__(self, source: str, channel: str, target: str, label: str, line: int):
        self.source, self.channel, self.target = source, channel, target
        self.label, self.line = label, line

    def __eq__(self, other) -> bool:
        return isinstance(other, LinkRow) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"LinkRow{self._key()!r}"

    def _key(self) -> tuple:
        return (self.source, self.channel, self.target, self.label, self.line)


class CatchUpStats:
    """What a catch-up did (shaped like the index's, so one follower serves both)."""

    def __init__(self, commit: str | None, *, rebuilt: bool = False):
        self.commit = commit
        self.files_indexed = 0
        self.files_removed = 0
        self.rebuilt = rebuilt
        self.busy = False


_CATCH_UP_LOCKS: dict = {}
#: The tables a follower of this process (the daemon's) keeps in step with HEAD.
FOLLOWED: set[str] = set()


def _catch_up_lock(path: str):
    """The lock this process's catch-ups of the table at ``path`` take turns on."""
    import threading

    return _CATCH_UP_LOCKS.setdefault(path, threading.Lock())


class LinkTable(FollowsHead):
    """The pages and links of one workspace's wiki.

    Args:
        root: the workspace directory.
        git_dir: its git folder (the table lives in ``<git_dir>/minara``).
    """

    def __init__(self, root: str | os.PathLike, git_dir: str | os.PathLike):
        self.root = os.fspath(root)
        self.git_dir = os.fspath(git_dir)
        self.path = os.path.join(self.git_dir, "minara", FILE_NAME)
        self._conn: sqlite3.Connection | None = None

    # -- the connection --------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError:
                if not os.access(os.path.dirname(self.path), os.W_OK):
                    self._conn = self._open_read_only()  # a read-only workspace: as it is
                else:  # damaged: a cache, so start over
                    os.remove(self.path)
                    self._conn = self._open()
        return self._conn

    def _open_read_only(self) -> sqlite3.Connection:
        """The table of a read-only workspace, read as it is (a WAL file needs a
        writable folder otherwise); catching up then fails clearly."""
        from urllib.parse import quote

        return sqlite3.connect(f"file:{quote(self.path)}?immutable=1", uri=True,
                               isolation_level=None, check_same_thread=False)

    def _open(self) -> sqlite3.Connection:
        """Connect; a table of another schema version is dropped and made again."""
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                               check_same_thread=False)
        try:
            _no_waiting_for_disk(conn)
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                conn.executescript("DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS pages; "
                                   "DROP TABLE IF EXISTS links;" + _SCHEMA
                                   + f"PRAGMA user_version = {SCHEMA_VERSION};")
        except BaseException:
            conn.close()
            raise
        return conn

    # -- catching up -------------------------------------------------------------

    def catch_up(self) -> CatchUpStats:
        """Bring the table to HEAD: a tree diff from the commit it reflects.

        Safe from several processes at once (SQLite's write lock). Within
        one process (the daemon's follower and a request), the catch-ups of
        one table take turns on a lock: the second then finds the table
        current, instead of polling SQLite's lock with sleeps.
        """
        from minarad.git.refs import read_workspace_head

        head = read_workspace_head(self.root)
        if head is not None and head == self.commit():
            return CatchUpStats(head)
        with _catch_up_lock(self.path):
            head = read_workspace_head(self.root)
            if head is not None and head == self.commit():
                return CatchUpStats(head)
            from minarad.git.repo import open_repo

            repo = open_repo(self.root)
            try:
                return self._catch_up_with(repo)
            finally:
                repo.close()

    def followed(self) -> bool:
        """True when a follower of this process (the daemon's) keeps this table in step."""
        return self.path in FOLLOWED

    def pages_unchanged(self, repo) -> bool:
        """True when HEAD's page folders (``wiki/``, ``channels/``) are those of the commit
        the table reflects: its answers hold for HEAD as they are.

        Reads two commits and their root trees from ``repo`` (an open
        repository): no diff and no write, so a reader after a commit that
        touched no page does not wait for the catch-up (the daemon's
        follower records the new commit soon after).
        """
        from minarad.git.refs import head_commit

        known, head = self.commit(), head_commit(repo)
        if known is None or head is None:
            return False
        if known == head:
            return True
        try:
            old, new = repo[repo[known.encode()].tree], repo[repo[head.encode()].tree]
            return all((name in old and old[name]) == (name in new and new[name])
                       for name in (WIKI_FOLDER.rstrip("/").encode(), b"channels"))
        except (KeyError, ValueError, AttributeError):
            return False  # a commit it no longer knows: catch up (which starts over)

    def _catch_up_with(self, repo) -> CatchUpStats:
        from minarad.git.diff import diff_trees, is_regular
        from minarad.git.objects import commit_tree, read_blob
        from minarad.git.refs import head_commit

        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            head, known = head_commit(repo), self.commit()
            if head == known:
                conn.execute("COMMIT")
                return CatchUpStats(head)
            old_tree = self.diff_base(repo)
            rebuilt = old_tree is None
            if rebuilt:
                conn.execute("DELETE FROM pages")
                conn.execute("DELETE FROM links")
            stats = CatchUpStats(head, rebuilt=rebuilt)
            store = repo.object_store
            changes = [c for c in diff_trees(store, old_tree, commit_tree(repo, head))
                       if is_page_folder(c.path)]
            before = self._parsed_before(changes)  # a moved page is not read again
            for change in changes:
                blob = change.blob if change.blob and is_regular(change.mode) else None
                if blob is not None and blob in before:
                    self._replace_file(change.path, blob, None, stats, before[blob])
                else:
                    data = read_blob(store, blob) if blob is not None else None
                    self._replace_file(change.path, blob, data, stats)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (head,))
            conn.execute("COMMIT")
            return stats
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _parsed_before(self, changes) -> dict[str, tuple]:
        """blob -> (own title or None, links) of the changed paths' rows as they stand."""
        known: dict[str, tuple] = {}
        for change in changes:
            row = self.conn.execute("SELECT blob, own_title, title FROM pages WHERE file=?",
                                    (change.path,)).fetchone()
            if row is None or row[0] in known:
                continue
            links = self.conn.execute("SELECT target, label, line FROM links WHERE source=?",
                                      (change.path,)).fetchall()
            known[row[0]] = (row[2] if row[1] else None, links)
        return known

    def _replace_file(self, path: str, blob: str | None, data: bytes | None,
                      stats: CatchUpStats, parsed: tuple | None = None) -> None:
        """Replace the rows of ``path`` with those of its new bytes (or of ``parsed``:
        the same blob's title and links, known from its old path)."""
        from minarad.wiki.names import default_title

        conn = self.conn
        conn.execute("DELETE FROM pages WHERE file=?", (path,))
        conn.execute("DELETE FROM links WHERE source=?", (path,))
        page = page_of_file(path)
        if page is None:
            return
        if blob is None:
            stats.files_removed += 1
            return
        name, channel = page
        if parsed is None:
            assert data is not None
            parsed = parse_page(data)
        own_title, links = parsed
        conn.execute("INSERT INTO pages VALUES (?, ?, ?, ?, ?, ?)",
                     (path, channel, name, own_title or default_title(name), blob,
                      int(own_title is not None)))
        conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?)",
                         [(path, channel, *link) for link in links])
        stats.files_indexed += 1

    # -- queries -------------------------------------------------------------------

    def pages(self, channel: str | None = None, prefix: str = "") -> list[tuple]:
        """The workspace's pages and ``channel``'s in tree order, segment by segment
        (``prefix``: that page and those under it)."""
        sql = "SELECT file, channel, name, title FROM pages WHERE channel IN ('', ?)"
        args: list = [channel or ""]
        if prefix:
            sql += " AND (name = ? OR substr(name, 1, ?) = ?)"
            args += [prefix, len(prefix) + 1, prefix + "/"]
        # by segments: "/" sorts before every other character, so a page's children
        # follow it ("a", "a/b", "a-b"), as a tree shows them
        order = " ORDER BY replace(name, '/', char(1)), channel"
        return self.conn.execute(sql + order, args).fetchall()  # plain tuples: PageRow's order

    def page(self, file: str) -> PageRow | None:
        """The row of one page file, or None."""
        row = self.conn.execute("SELECT file, channel, name, title FROM pages WHERE file=?",
                                (file,)).fetchone()
        return PageRow(*row) if row else None

    def page_exists(self, name: str, channel: str) -> bool:
        """True when ``name`` is a page of ``channel`` ("" for the workspace)."""
        return self.conn.execute("SELECT 1 FROM pages WHERE name=? AND channel=?",
                                 (name, channel)).fetchone() is not None

    def links_to(self, name: str, channels: tuple[str, ...]) -> list[LinkRow]:
        """The links naming ``name`` from pages of ``channels``, by source and line."""
        marks = ",".join("?" * len(channels))
        rows = self.conn.execute(
            f"SELECT source, channel, target, label, line FROM links WHERE target=? "
            f"AND channel IN ({marks}) ORDER BY source, line", (name, *channels)).fetchall()
        return [LinkRow(*row) for row in rows]

    def links_to_any(self, name: str) -> list[LinkRow]:
        """Every link naming ``name``, from any page of any channel."""
        rows = self.conn.execute("SELECT source, channel, target, label, line FROM links "
                                 "WHERE target=? ORDER BY source, line", (name,)).fetchall()
        return [LinkRow(*row) for row in rows]

    def links_from(self, file: str) -> list[LinkRow]:
        """The links of one page, in order."""
        rows = self.conn.execute("SELECT source, channel, target, label, line FROM links "
                                 "WHERE source=? ORDER BY line", (file,)).fetchall()
        return [LinkRow(*row) for row in rows]

    def missing_links(self, channel: str | None = None) -> list[LinkRow]:
        """Links (from pages the caller sees) whose target page does not exist."""
        rows = self.conn.execute(
            "SELECT l.source, l.channel, l.target, l.label, l.line FROM links l "
            "WHERE l.channel IN ('', ?) AND NOT EXISTS (SELECT 1 FROM pages p "
            "WHERE p.name = l.target AND p.channel IN ('', l.channel)) "
            "ORDER BY l.source, l.line", (channel or "",)).fetchall()
        return [LinkRow(*row) for row in rows]


def parse_page(data: bytes) -> tuple[str | None, list[tuple]]:
    """A page file's own title (front matter; None when it has none) and its links as
    ``(target name, label, line)``, one per target and label."""
    from minarad.workspace.links import parse_links
    from minarad.workspace.markdown import parse_front_matter

    text = data.decode("utf-8", "replace")
    value = parse_front_matter(text)[0].get("title")
    own_title = str(value).strip() if isinstance(value, (str, int)) and str(value).strip() \
        else None
    links, seen = [], set()
    for link in parse_links(text):
        target = link_target_name(link.target)
        if target is None or (target, link.label) in seen:
            continue
        seen.add((target, link.label))
        links.append((target, link.label, text.count("\n", 0, link.start) + 1))
    return own_title, links


def visible_backlinks(table: LinkTable, name: str, page_channel: str,
                      channel: str | None) -> list[tuple]:
    """The pages linking to page ``name`` that a caller of ``channel`` sees.

    ``page_channel`` is the channel of the page read ("" for a workspace
    page). A channel page's ``[[name]]`` names the channel's own page when
    there is one, so it is no backlink of the workspace page then.

    Returns:
        ``(name, channel, title, file, line, label)`` per linking page (its
        first link), sorted by name.
    """
    from minarad.wiki.names import default_title

    channels = (page_channel,) if page_channel else ("", *((channel,) if channel else ()))
    marks = ",".join("?" * len(channels))
    rows = table.conn.execute(
        f"SELECT l.source, l.channel, l.line, l.label, p.name, p.channel, p.title "
        f"FROM links l LEFT JOIN pages p ON p.file = l.source "
        f"WHERE l.target = ? AND l.channel IN ({marks}) ORDER BY l.source, l.line",
        (name, *channels)).fetchall()
    shadowed: dict[str, bool] = {}  # channel -> has its own page of that name
    seen: dict[str, tuple] = {}
    for source, link_channel, line, label, page_name, page_chan, title in rows:
        if source in seen:
            continue
        if link_channel and not page_channel:
            if link_channel not in shadowed:
                shadowed[link_channel] = table.page_exists(name, link_channel)
            if shadowed[link_channel]:
                continue
        if page_name is None:
            page_name, page_chan = page_of_file(source) or (source, link_channel)
            title = default_title(page_name)
        seen[source] = (page_name, page_chan, title, source, line, label)
    return sorted(seen.values(), key=lambda b: (b[0], b[1]))


def visible_pages(table: LinkTable, channel: str | None, prefix: str = "") -> list[tuple]:
    """``(file, channel, name, title)`` of the pages a caller of ``channel`` sees, in
    tree order; a channel page hides the workspace page of the same name."""
    out: list[tuple] = []
    for row in table.pages(channel, prefix):  # a name's workspace row comes first
        if out and out[-1][2] == row[2]:
            out[-1] = row
        else:
            out.append(row)
    return out

"""A model-based test of the store: random edits from every side, checked after each step.

A hypothesis state machine drives one workspace with the store (two
``Store`` objects on it), a real ``minara`` child process, an "editor"
writing files in place, a ``sed -i``-like program (temp file + rename) and
the daemon's ``commit_disk``. A plain model says what every file must hold
and which versions its history must list; after every step the real git
CLI checks that ``git status`` names exactly the edits not yet committed,
and that each path's history is exactly the accepted writes, each once:
refused writes appear nowhere; ``git fsck --strict`` checks the repository
at the end of each sequence.

Two leftovers of earlier disasters are among the steps: a stale 0-byte
``.git/objects/xx/<id>.lock`` (what a writer killed while storing that
object leaves) for random contents and for exactly the content the next
write makes, which must be written all the same; and files whose names are
not UTF-8 appearing in the workspace: never versioned (``git status`` lists
them untracked), every other file still committed, and a write to such a
name refused with path_not_utf8.

The default run is short; ``MINARA_SOAK=1`` (or ``bench/soak.py``) runs it
long before a release. A failure is found in seconds, but hypothesis then
shrinks it to the shortest failing sequence, which can take a few minutes.

Known bugs kept out of the default strategies until their fixes land
(each marked ``KNOWN`` below, and tested on its own in ``test_edges.py``):
an empty append makes a blank-line version. Also left out for now: a
``sed -i`` running *during* an append (duplicates the line), and mode-only
changes (``chmod +x``, which ``commit_disk`` does not commit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from minarad.errors import InvalidInput, NotFound, VersionConflict
from minarad.store import Store
from minarad.workspace.content import git_blob_id
from tests.conftest import MINARA, git, git_bytes
from tests.reliability.conftest import SOAK, all_histories, leave_object_lock

PATHS = ("notes.md", "deep/c.md")
#: Names that are not UTF-8 (Latin-1 and stray bytes), beside the model's files and in folders.
ODD_NAMES = st.sampled_from([b"caf\xe9.md", b"x\xff.md", b"deep/d\xe9.md", b"d\xe9/a.md"])
#: Line text: ASCII, a Hangul syllable, Markdown bullets; never empty (KNOWN: an
#: empty append makes a blank-line version, so ``min_size=1``).
LINES = st.text(alphabet="ab xy-#*\u00e9\ud55c", min_size=1, max_size=12).map(str.strip).filter(
    bool)
EOLS = st.sampled_from(["\n", "\r\n"])
#: An editor's save just before a step (line, line ending, newline at the end), or none.
EDITS = st.none() | st.tuples(LINES, EOLS, st.booleans())


def blob(text: str | None) -> str | None:
    """The git blob id of ``text`` (None for a missing file)."""
    return None if text is None else git_blob_id(text.encode("utf-8"))


def appended(old: str, text: str) -> str:
    """What an append of ``text`` must make of ``old`` (whole lines, ``old``'s line ends)."""
    eol = "\r\n" if "\r\n" in old else "\n"
    if eol == "\r\n":
        text = text.replace("\n", "\r\n")
    if old and not old.endswith("\n"):
        old += eol
    return old + (text if text.endswith("\n") else text + eol)


class PathModel:
    """What one path holds on disk and the versions its history must list."""

    def __init__(self):
        self.disk: str | None = None
        self.versions: list[str | None] = []

    @property
    def head(self) -> str | None:
        return self.versions[-1] if self.versions else None

    @property
    def pending(self) -> bool:
        return blob(self.disk) != self.head

    def absorb(self) -> None:
        """The store commits an editor's change before it acts on the path."""
        if self.pending:
            self.versions.append(blob(self.disk))

    def commit(self, text: str | None) -> None:
        self.disk = text
        self.versions.append(blob(text))


class StoreMachine(RuleBasedStateMachine):
    """Random sequences of writes from every side of one workspace."""

    def __init__(self):
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="minara-model-"))
        self.ws = self.tmp / "ws"
        self.store = Store(self.ws, operator="the-operator")
        self.store.ensure()
        self.other = Store(self.ws, operator="the-operator")
        self.model = {p: PathModel() for p in PATHS}
        self.odd: set[bytes] = set()
        self.serial = 0
        self.env = self._child_env()

    def teardown(self):
        """``git fsck --strict`` once the sequence ends, then the workspace is removed.

        Git objects are never removed here (no gc), so one fsck at the end sees every
        object and ref any step wrote; ``git status`` is checked after every step.
        """
        try:
            git(self.ws, "fsck", "--strict", "--no-progress")
        finally:
            self.store.close()
            self.other.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _child_env(self) -> dict:
        home = self.tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MINARA_", "WORKSPACE_"))}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_STATE_HOME=str(home / ".state"), XDG_DATA_HOME=str(home / ".data"),
                   MINARA_WORKSPACE_DIR=str(self.ws), MINARA_AUTHOR="child")
        return env

    def token(self, kind: str) -> str:
        """A line no other step writes, so each version is distinct."""
        self.serial += 1
        return f"{kind}-{self.serial}"

    def full(self, rel: str) -> Path:
        return self.ws / rel

    # -- the store ----------------------------------------------------------------

    @initialize(path=st.sampled_from(PATHS), line=LINES)
    def create_one(self, path, line):
        text = f"# {path}\n\n- {line} {self.token('create')}\n"
        self.store.write(path, text, author="agent")
        self.model[path].commit(text)

    @rule(path=st.sampled_from(PATHS), line=LINES, eol=EOLS,
          base=st.sampled_from(["none", "current", "stale"]), second=st.booleans(), edit=EDITS)
    def set_text(self, path, line, eol, base, second, edit):
        self.edit_first(path, edit)
        m = self.model[path]
        text = f"# {path}{eol}{eol}- {line} {self.token('set')}{eol}"
        m.absorb()
        stale = base == "stale" and len(m.versions) > 0
        number = len(m.versions) - 1 if stale else len(m.versions)
        store = self.other if second else self.store
        if stale:
            with pytest.raises(VersionConflict):
                store.write(path, text, base=number, author="agent")
            return
        store.write(path, text, base=None if base == "none" else number, author="agent")
        m.commit(text)

    @rule(path=st.sampled_from(PATHS), line=LINES, second=st.booleans(), edit=EDITS,
          locked=st.booleans())
    def append_line(self, path, line, second, edit, locked):
        """An append; ``locked``: a killed writer left a lock for exactly its result."""
        self.edit_first(path, edit)
        m = self.model[path]
        text = f"- {line} {self.token('append')}"
        if locked:
            leave_object_lock(self.ws, appended(m.disk or "", text).encode())
        (self.other if second else self.store).append(path, text, author="agent")
        m.absorb()
        m.commit(appended(m.disk or "", text))

    @rule(path=st.sampled_from(PATHS), edit=EDITS)
    def delete(self, path, edit):
        self.edit_first(path, edit)
        m = self.model[path]
        m.absorb()
        if m.disk is None:
            with pytest.raises(NotFound):
                self.store.delete(path, author="agent")
            return
        self.store.delete(path, author="agent")
        m.commit(None)

    @rule(src=st.sampled_from(PATHS), dst=st.sampled_from(PATHS), edit=EDITS)
    def rename(self, src, dst, edit):
        self.edit_first(src, edit)
        s, d = self.model[src], self.model[dst]
        s.absorb()
        if s.disk is None:
            with pytest.raises(NotFound):
                self.store.rename(src, dst, author="agent")
        elif d.disk is not None:
            with pytest.raises(InvalidInput):
                self.store.rename(src, dst, author="agent")
        else:
            self.store.rename(src, dst, author="agent")
            text = s.disk
            s.commit(None)
            d.commit(text)

    @rule(whole_tree=st.booleans(), path=st.sampled_from(PATHS))
    def commit_disk(self, whole_tree, path):
        """What the daemon does with settled edits (the whole tree, or one path)."""
        self.store.commit_disk(None if whole_tree else [path])
        for rel, m in self.model.items():
            if whole_tree or rel == path:
                m.absorb()

    # -- leftovers of earlier disasters -------------------------------------------

    @rule(path=st.sampled_from(PATHS), line=LINES, eol=EOLS,
          by=st.sampled_from(["store", "child", "editor"]))
    def write_a_content_a_killed_writer_locked(self, path, line, eol, by):
        """A killed writer left ``<id>.lock`` for exactly the content written now."""
        text = f"# {path}{eol}{eol}- {line} {self.token('locked')}{eol}"
        leave_object_lock(self.ws, text.encode())
        m = self.model[path]
        if by == "editor":
            self.editor_writes_text(path, text)
            self.store.commit_disk([path])
            m.absorb()
            return
        if by == "store":
            self.store.write(path, text, author="agent")
        else:
            proc = subprocess.run([MINARA, "memory", "set", path, text], env=self.env,
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
        m.absorb()
        m.commit(text)

    @rule(data=st.binary(max_size=40))
    def a_killed_writer_left_a_lock_for_random_content(self, data):
        leave_object_lock(self.ws, data)

    @rule(name=ODD_NAMES)
    def a_file_whose_name_is_not_utf8_appears(self, name):
        full = os.path.join(os.fsencode(self.ws), name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(b"not versioned\n")
        self.odd.add(name)

    @rule(name=ODD_NAMES, child=st.booleans())
    def a_write_to_a_name_that_is_not_utf8_is_refused(self, name, child):
        full = os.path.join(os.fsencode(self.ws), name)
        before = open(full, "rb").read() if os.path.lexists(full) else None
        if child:
            done = subprocess.run([MINARA.encode(), b"--json", b"memory", b"set", name, b"x"],
                                  env=self.env, capture_output=True, timeout=120)
            assert done.returncode == 1, done.stderr
            assert json.loads(done.stderr)["error"] == "path_not_utf8"
        else:
            with pytest.raises(InvalidInput) as refused:
                self.store.write(os.fsdecode(name), "x\n", author="agent")
            assert refused.value.code == "path_not_utf8"
        assert (open(full, "rb").read() if os.path.lexists(full) else None) == before

    # -- other programs ---------------------------------------------------------

    def edit_first(self, path, edit) -> None:
        if edit is not None:
            self.editor_writes(path, *edit)

    @rule(path=st.sampled_from(PATHS), line=LINES, eol=EOLS, newline_at_end=st.booleans())
    def editor_writes(self, path, line, eol, newline_at_end):
        """An editor saving in place (truncate and write), without the store."""
        text = f"# {path}{eol}- {line} {self.token('editor')}" + (eol if newline_at_end else "")
        self.editor_writes_text(path, text)

    def editor_writes_text(self, path: str, text: str) -> None:
        self.full(path).parent.mkdir(parents=True, exist_ok=True)
        self.full(path).write_bytes(text.encode())
        self.model[path].disk = text

    @rule(path=st.sampled_from(PATHS))
    def editor_deletes(self, path):
        if self.model[path].disk is not None:
            self.full(path).unlink()
            self.model[path].disk = None

    @precondition(lambda self: any(m.disk for m in self.model.values()))
    @rule(path=st.sampled_from(PATHS))
    def sed_replaces(self, path):
        """``sed -i``: read, write a temp file beside it, rename it over the file."""
        m = self.model[path]
        if m.disk is None:
            return
        text = m.disk.replace("- ", f"- {self.token('sed')} ", 1)
        fd, tmp = tempfile.mkstemp(dir=self.full(path).parent, prefix="sed")
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode())
        os.chmod(tmp, 0o644)
        os.rename(tmp, self.full(path))
        m.disk = text

    @rule(path=st.sampled_from(PATHS), line=LINES, edit=EDITS)
    def child_appends(self, path, line, edit):
        """A real ``minara memory append`` in another process."""
        self.edit_first(path, edit)
        text = f"- {line} {self.token('child')}"
        proc = subprocess.run([MINARA, "memory", "append", path, text], env=self.env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        m = self.model[path]
        m.absorb()
        m.commit(appended(m.disk or "", text))

    @rule(path=st.sampled_from(PATHS), other_path=st.sampled_from(PATHS), line=LINES)
    def child_and_store_append_at_once(self, path, other_path, line):
        """A ``minara`` child appends while this process appends too (same or other file)."""
        theirs, ours = f"- {line} {self.token('child')}", f"- {line} {self.token('ours')}"
        child = subprocess.Popen([MINARA, "memory", "append", path, theirs], env=self.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.store.append(other_path, ours, author="agent")
        finally:
            _out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        self._apply_either_order(path, theirs, other_path, ours)

    def _apply_either_order(self, path, theirs, other_path, ours) -> None:
        a, b = self.model[path], self.model[other_path]
        a.absorb()
        b.absorb()
        if path != other_path:
            a.commit(appended(a.disk or "", theirs))
            b.commit(appended(b.disk or "", ours))
            return
        on_disk = self.full(path).read_bytes().decode()
        first, second = (theirs, ours) if on_disk.find(theirs) < on_disk.find(ours) else (
            ours, theirs)
        a.commit(appended(a.disk or "", first))
        a.commit(appended(a.disk or "", second))

    # -- checks after every step ---------------------------------------------------

    @invariant()
    def disk_matches_the_model(self):
        for rel, m in self.model.items():
            path = self.full(rel)
            on_disk = path.read_bytes().decode() if path.exists() else None
            assert on_disk == m.disk, rel

    @invariant()
    def history_lists_every_accepted_write_once(self):
        histories = all_histories(self.ws)
        for rel, m in self.model.items():
            assert histories.get(rel, []) == m.versions, rel

    @invariant()
    def git_status_agrees(self):
        """status names the pending edits, and each odd name untracked only (fsck: teardown).

        An odd name anywhere in HEAD or the index would show as tracked
        (no ``??`` line) or as added or deleted (a second line): never versioned.
        """
        status = git_bytes(self.ws, "status", "--porcelain", "--untracked-files=all", "-z")
        entries = [entry for entry in status.split(b"\0") if entry]
        assert sorted(e for e in entries if e[3:] in self.odd) == sorted(
            b"?? " + name for name in self.odd)
        dirty = {e[3:].decode() for e in entries if e[3:] not in self.odd}
        assert dirty == {rel for rel, m in self.model.items() if m.pending}

    @invariant()
    def both_stores_count_the_versions(self):
        for rel, m in self.model.items():
            assert self.store.version_number(rel) == len(m.versions), rel
            assert self.other.version_number(rel) == len(m.versions), rel


StoreMachine.TestCase.settings = settings(
    max_examples=200 if SOAK else 20, stateful_step_count=30 if SOAK else 12, deadline=None,
    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_store_model = StoreMachine.TestCase
test_store_model.pytestmark = [pytest.mark.soak]

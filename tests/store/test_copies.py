"""Pull folders and their manifests, attacked: nothing escapes, nothing is lost."""

from __future__ import annotations

import json
import os

import pytest

from minarad.errors import Forbidden, InvalidInput, MinaraError
from minarad.store.copies import MANIFEST, pull, push
from tests.conftest import assert_repo_sound, git


@pytest.fixture
def folder(tmp_path, store):
    """A pull folder next to the workspace, freshly pulled."""
    d = tmp_path / "copy"
    pull(store, str(d))
    return d


@pytest.fixture
def outside(tmp_path):
    """A file outside both the workspace and the pull folder."""
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir(exist_ok=True)
    victim.write_text("export SECRET=hunter2\n")
    return victim


def _manifest(folder) -> dict:
    return json.loads((folder / MANIFEST).read_text())


def _save_manifest(folder, manifest) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest))


def _nothing_changed(ws, head, outside) -> None:
    assert git(ws, "rev-parse", "HEAD") == head
    assert outside.read_text() == "export SECRET=hunter2\n"
    assert "hunter2" not in git(ws, "log", "-p", "--all")
    assert_repo_sound(ws)


def _key_for(kind: str, folder, outside) -> str:
    return {"absolute": str(outside),
            "dotdot": os.path.relpath(outside, folder),
            "dotdot_inside": "sub/../" + os.path.relpath(outside, folder)}[kind]


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "dotdot_inside"])
def test_push_never_reads_a_copy_from_outside_the_folder(store, ws, folder, outside, kind):
    manifest = _manifest(folder)
    manifest["files"] = {_key_for(kind, folder, outside): manifest["files"]["MEMORY.md"]}
    _save_manifest(folder, manifest)
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden):
        push(store, str(folder), author="tester")
    _nothing_changed(ws, head, outside)


@pytest.mark.parametrize("kind", ["absolute", "dotdot"])
def test_push_never_writes_a_merge_over_a_file_outside_the_folder(store, ws, folder, outside,
                                                                  kind):
    manifest = _manifest(folder)
    manifest["files"] = {_key_for(kind, folder, outside): manifest["files"]["MEMORY.md"]}
    _save_manifest(folder, manifest)
    store.append("MEMORY.md", "- written meanwhile", author="other")  # makes push merge
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden):
        push(store, str(folder), author="tester")
    _nothing_changed(ws, head, outside)


@pytest.mark.parametrize("key", [".git/config", "sub/.git/HEAD", ".GIT/x"])
def test_push_refuses_manifest_keys_into_a_git_folder(store, ws, folder, outside, key):
    os.makedirs(folder / os.path.dirname(key), exist_ok=True)
    (folder / key).write_text("[core]\n")
    manifest = _manifest(folder)
    manifest["files"][key] = dict(manifest["files"]["MEMORY.md"], blob_id=None)
    _save_manifest(folder, manifest)
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden) as err:
        push(store, str(folder), author="tester")
    assert err.value.code == "path_in_git_dir"
    _nothing_changed(ws, head, outside)


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.md", ".git/config",
                                  ".git/hooks/pre-commit", "USER.md", "channels/x/MEMORY.md"])
def test_push_refuses_entry_paths_a_pull_never_writes(store, ws, folder, outside, path):
    (folder / "MEMORY.md").write_text("- pushed where?\n")
    manifest = _manifest(folder)
    manifest["files"]["MEMORY.md"]["path"] = path
    _save_manifest(folder, manifest)
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(MinaraError):
        push(store, str(folder), author="tester")
    assert not (ws.parent / "outside.md").exists()
    assert (ws / "USER.md").read_text() != "- pushed where?\n"
    _nothing_changed(ws, head, outside)


BAD_MANIFESTS = {
    "a list": [],
    "a string": "files",
    "files as a list": {"workspace": "WS", "files": ["MEMORY.md"]},
    "an entry as a list": {"workspace": "WS", "files": {"MEMORY.md": ["MEMORY.md", 1]}},
    "a number as path": {"workspace": "WS", "files": {"MEMORY.md": {"path": 7, "version": 1}}},
    "a text version": {"workspace": "WS",
                       "files": {"MEMORY.md": {"path": "MEMORY.md", "version": "1"}}},
    "a boolean version": {"workspace": "WS",
                          "files": {"MEMORY.md": {"path": "MEMORY.md", "version": True}}},
    "a negative version": {"workspace": "WS",
                           "files": {"MEMORY.md": {"path": "MEMORY.md", "version": -1}}},
    "a number as blob id": {"workspace": "WS", "files": {
        "MEMORY.md": {"path": "MEMORY.md", "version": 1, "blob_id": 12}}},
    "a list as workspace": {"workspace": ["WS"], "files": {}},
    "a number as channel": {"workspace": "WS", "channel": 3, "files": {}},
    "an empty key": {"workspace": "WS", "files": {"": {"path": "MEMORY.md", "version": 1}}},
    "the manifest as key": {"workspace": "WS",
                            "files": {MANIFEST: {"path": "MEMORY.md", "version": 1}}},
}


@pytest.mark.parametrize("shape", sorted(BAD_MANIFESTS))
def test_push_refuses_a_manifest_of_the_wrong_shape(store, ws, folder, outside, shape):
    data = json.loads(json.dumps(BAD_MANIFESTS[shape]).replace('"WS"',
                                                               json.dumps(str(store.root))))
    _save_manifest(folder, data)
    (folder / "MEMORY.md").write_text("- edited\n")
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput) as err:
        push(store, str(folder), author="tester")
    assert err.value.code == "invalid_manifest" and MANIFEST in err.value.message
    assert "\n" not in err.value.message
    _nothing_changed(ws, head, outside)


def test_push_never_follows_a_copy_replaced_by_a_symlink(store, ws, folder, outside):
    os.unlink(folder / "MEMORY.md")
    os.symlink(outside, folder / "MEMORY.md")
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden) as err:
        push(store, str(folder), author="tester")
    assert err.value.code == "symlink"
    _nothing_changed(ws, head, outside)


def test_push_never_follows_a_symlinked_folder_in_a_key(store, ws, folder, outside):
    os.symlink(outside.parent, folder / "sub")
    manifest = _manifest(folder)
    manifest["files"] = {"sub/.bashrc": manifest["files"]["MEMORY.md"]}
    _save_manifest(folder, manifest)
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(MinaraError):
        push(store, str(folder), author="tester")
    _nothing_changed(ws, head, outside)


def test_push_refuses_a_copy_that_is_not_a_regular_file(store, ws, folder, outside):
    os.unlink(folder / "SOUL.md")
    (folder / "SOUL.md").mkdir()
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(MinaraError):
        push(store, str(folder), author="tester")
    _nothing_changed(ws, head, outside)


def test_push_never_follows_a_symlinked_manifest(store, ws, folder, outside, tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text((folder / MANIFEST).read_text())
    os.unlink(folder / MANIFEST)
    os.symlink(elsewhere, folder / MANIFEST)
    with pytest.raises(Forbidden) as err:
        push(store, str(folder), author="tester")
    assert err.value.code == "symlink"


def test_a_sound_manifest_still_pushes_and_merges(store, ws, folder):
    (folder / "MEMORY.md").write_text((folder / "MEMORY.md").read_text() + "- mine\n")
    store.append("MEMORY.md", "- theirs", author="other")
    results = {r.name: r for r in push(store, str(folder), author="tester")}
    assert results["MEMORY.md"].action == "merged"
    text = (ws / "MEMORY.md").read_text()
    assert "- mine\n" in text and "- theirs\n" in text
    assert (folder / "MEMORY.md").read_text() == text
    assert {r.action for r in push(store, str(folder), author="tester")} == {"unchanged"}
    assert_repo_sound(ws)


# -- pull over a folder that holds edits or files it did not write ------------------


def test_pull_refuses_to_throw_away_an_edited_copy(store, ws, folder):
    (folder / "MEMORY.md").write_text("- my unpushed edit\n")
    (folder / "SOUL.md").write_text("# my soul edit\n")
    store.append("MEMORY.md", "- news", author="other")
    with pytest.raises(InvalidInput) as err:
        pull(store, str(folder))
    assert err.value.code == "unpushed_edits"
    assert "MEMORY.md" in err.value.message and "SOUL.md" in err.value.message
    assert "minara memory push --dir" in err.value.message and "--force" in err.value.message
    assert err.value.details["files"] == ["MEMORY.md", "SOUL.md"]
    assert (folder / "MEMORY.md").read_text() == "- my unpushed edit\n"
    assert (folder / "SOUL.md").read_text() == "# my soul edit\n"


def test_pull_after_push_or_with_force_replaces_the_copies(store, ws, folder):
    (folder / "MEMORY.md").write_text("- pushed edit\n")
    push(store, str(folder), author="tester")
    store.append("MEMORY.md", "- news", author="other")
    pull(store, str(folder))
    assert (folder / "MEMORY.md").read_text() == (ws / "MEMORY.md").read_text()
    (folder / "SOUL.md").write_text("# throw me away\n")
    pull(store, str(folder), force=True)
    assert (folder / "SOUL.md").read_text() == (ws / "SOUL.md").read_text()


def test_pull_never_overwrites_a_file_it_did_not_write(store, tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "SOUL.md").write_text("# my own unrelated file\n")
    for force in (False, True):
        with pytest.raises(InvalidInput) as err:
            pull(store, str(d), force=force)
        assert err.value.code == "file_not_pulled" and "SOUL.md" in err.value.message
    assert (d / "SOUL.md").read_text() == "# my own unrelated file\n"
    assert sorted(os.listdir(d)) == ["SOUL.md"]


def test_pull_never_overwrites_a_file_missing_from_its_manifest(store, tmp_path):
    d = tmp_path / "copy"
    pull(store, str(d), names=("MEMORY.md",))
    (d / "AGENTS.md").write_text("# mine\n")
    with pytest.raises(InvalidInput) as err:
        pull(store, str(d), force=True)
    assert err.value.code == "file_not_pulled" and "AGENTS.md" in err.value.message
    assert (d / "AGENTS.md").read_text() == "# mine\n"


def test_pull_never_replaces_or_follows_a_symlink(store, folder, outside):
    os.unlink(folder / "SOUL.md")
    os.symlink(outside, folder / "SOUL.md")
    for force in (False, True):
        with pytest.raises(Forbidden) as err:
            pull(store, str(folder), force=force)
        assert err.value.code == "symlink"
    assert os.path.islink(folder / "SOUL.md")
    assert outside.read_text() == "export SECRET=hunter2\n"


def test_pull_takes_over_copies_that_already_hold_the_latest_text(store, ws, tmp_path):
    d = tmp_path / "copy"
    d.mkdir()
    for name in ("SOUL.md", "AGENTS.md", "MEMORY.md"):  # a pull that stopped before its manifest
        (d / name).write_bytes((ws / name).read_bytes())
    pulled = pull(store, str(d))
    assert [p.name for p in pulled] == ["SOUL.md", "AGENTS.md", "MEMORY.md"]
    assert (d / MANIFEST).exists()


def test_pull_refuses_a_folder_with_a_broken_manifest(store, folder):
    (folder / "MEMORY.md").write_text("- unpushed\n")
    (folder / MANIFEST).write_text("[1, 2]")
    with pytest.raises(InvalidInput) as err:
        pull(store, str(folder), force=True)
    assert err.value.code == "invalid_manifest"
    assert (folder / "MEMORY.md").read_text() == "- unpushed\n"


@pytest.mark.parametrize("inside", ["", "notes", ".git/x"])
def test_pull_refuses_a_folder_inside_the_workspace(store, ws, inside):
    head = git(ws, "rev-parse", "HEAD")
    with pytest.raises(Forbidden) as exc:
        pull(store, str(ws / inside))
    assert exc.value.code == "pull_dir_in_workspace"
    assert not (ws / inside / MANIFEST).exists()
    assert git(ws, "rev-parse", "HEAD") == head
    assert_repo_sound(ws)


@pytest.mark.parametrize("record", ["[1, 2]", "{\"MEMORY.md\": 7}", "not json", ""])
def test_pull_with_a_damaged_reader_record_reports_every_file_changed(store, tmp_path, record):
    pull(store, str(tmp_path / "a"), reader="agent")
    readers = store.state_dir / "readers"
    for f in readers.iterdir():
        f.write_text(record)
    pulled = pull(store, str(tmp_path / "b"), reader="agent")
    assert pulled and all(p.changed for p in pulled)

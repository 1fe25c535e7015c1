"""A round's temporaries: in ``.git/minara/staging/``, never through a symlink."""

from __future__ import annotations

import os

from minarad.workspace.staged import STAGING, StagedFile, remove_staged_leftovers


def _workspace(tmp_path):
    root = tmp_path / "ws"
    (root / ".git" / "minara").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("old\n")
    return root


def _put(root, rel: str, data: bytes) -> list[str]:
    """Write ``rel`` as a round does; the staging folder's names while it was staged."""
    one = StagedFile(root, rel, data)
    try:
        one.write()
        staging = root / STAGING
        seen = sorted(os.listdir(staging)) if staging.is_dir() and not staging.is_symlink() \
            else []
        one.install()
    finally:
        one.close()
    return seen


def test_a_temporary_is_staged_in_the_git_folder_and_renamed_into_place(tmp_path):
    root = _workspace(tmp_path)
    seen = _put(root, "notes/a.md", b"new\n")
    assert len(seen) == 1 and seen[0].endswith(".minara-tmp")
    assert (root / "notes" / "a.md").read_bytes() == b"new\n"
    assert os.listdir(root / STAGING) == []
    assert sorted(os.listdir(root / "notes")) == ["a.md"]


def test_a_symlinked_staging_folder_is_not_followed(tmp_path):
    root = _workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / STAGING).symlink_to(outside)
    _put(root, "notes/a.md", b"new\n")
    assert (root / "notes" / "a.md").read_bytes() == b"new\n"
    assert os.listdir(outside) == []  # nothing written through the link
    assert sorted(os.listdir(root / "notes")) == ["a.md"]  # staged beside, then renamed

    (outside / "x.minara-tmp").write_text("not ours")
    remove_staged_leftovers(root)
    assert (outside / "x.minara-tmp").read_text() == "not ours"


def test_a_killed_writer_s_leftovers_are_removed(tmp_path):
    root = _workspace(tmp_path)
    (root / STAGING).mkdir()
    (root / STAGING / ".0123.minara-tmp").write_text("half")
    (root / STAGING / "keep.txt").write_text("other")
    remove_staged_leftovers(root)
    assert os.listdir(root / STAGING) == ["keep.txt"]

"""A remote commit holding a name that is not UTF-8 is refused, never renamed."""

from __future__ import annotations

import os
import subprocess

import pytest

from minarad.errors import InvalidInput
from minarad.git.remotes import add_remote
from minarad.sync.engine import sync
from tests.conftest import assert_repo_sound, git


def test_a_latin1_name_on_the_remote_is_named_and_nothing_is_renamed(machines, bare, tmp_path):
    laptop = machines("laptop")
    add_remote(laptop.repo, "origin", str(bare))
    sync(laptop, "origin", machine="laptop")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    with open(os.path.join(os.fsencode(clone), b"bad\xff.md"), "wb") as fh:
        fh.write(b"made elsewhere\n")
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "odd name")
    git(clone, "push", "-q", "origin", "HEAD")
    head = laptop.head()

    with pytest.raises(InvalidInput) as err:
        sync(laptop, "origin", machine="laptop")
    assert err.value.code == "remote_path_not_utf8"
    assert "'bad\\xff.md'" in err.value.message and "git mv" in err.value.message
    assert laptop.head() == head
    assert not any("\ufffd" in name for name in os.listdir(laptop.root))
    remote_names = subprocess.run(["git", "-C", str(bare), "ls-tree", "-z", "--name-only",
                                   "HEAD"], capture_output=True, check=True).stdout.split(b"\0")
    assert b"bad\xff.md" in remote_names
    assert_repo_sound(laptop.root)

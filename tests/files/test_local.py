"""The local file store: limit at the boundary, keys, refusals, modes, logged deletion."""

from __future__ import annotations

import io
import json
import os
import stat
import threading
import time

import pytest

from minarad.errors import Forbidden, InvalidInput, NotFound
from minarad.files import FileTooLarge, LocalFileStore
from minarad.files.keys import check_key, new_key, sanitise_extension

MIB = 1024 * 1024


@pytest.fixture
def files(tmp_path):
    return LocalFileStore(tmp_path / "data" / "uploads", max_bytes=20 * MIB)


def _all_files(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_put_is_stored_under_a_key_and_read_back(files):
    before = int(time.time() * 1000)
    stored = files.put("u1", b"hello", "Notes.TXT")
    after = int(time.time() * 1000)
    assert stored.key.startswith("chat/files/u1/") and stored.key.endswith(".txt")
    assert stored.url == "/v1/files/" + stored.key and stored.size == 5
    assert before <= stored.uploaded_ms <= after  # the key's time is the time of the put
    assert files.get(stored.key) == b"hello"
    assert (files.root / stored.key).read_bytes() == b"hello"


def test_exactly_the_limit_is_accepted_and_one_byte_more_stores_nothing(files):
    exact = files.put("u1", io.BytesIO(b"x" * (20 * MIB)), "big.bin")
    assert exact.size == 20 * MIB and os.path.getsize(files.root / exact.key) == 20 * MIB
    before = _all_files(files.root)
    for source in (b"y" * (20 * MIB + 1), io.BytesIO(b"y" * (20 * MIB + 1))):
        with pytest.raises(FileTooLarge) as err:
            files.put("u1", source, "bigger.bin")
        assert err.value.code == "file_too_large" and err.value.http_status == 413
    assert _all_files(files.root) == before  # no temp file, no partial file


def test_a_stream_over_the_limit_is_not_read_to_its_end(tmp_path):
    small = LocalFileStore(tmp_path / "u", max_bytes=10)

    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self):
            return True

        def readinto(self, buffer):
            self.read_bytes += len(buffer)
            buffer[:] = b"z" * len(buffer)
            return len(buffer)

    endless = Endless()
    with pytest.raises(FileTooLarge):
        small.put("u1", endless, "x.txt")
    assert endless.read_bytes <= 11


def test_stored_files_have_no_execute_bits_whatever_the_umask(files):
    old = os.umask(0)
    try:
        stored = files.put("u1", b"#!/bin/sh\necho hi\n", "run.sh")
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(files.root / stored.key).st_mode)
    assert mode & 0o111 == 0 and mode == 0o644


def test_keys_are_unique_and_sort_in_upload_order(files):
    keys = []
    for n in range(3):
        keys.append(files.put("u1", f"{n}".encode(), "a.txt").key)
        time.sleep(0.002)  # distinct milliseconds, so the order is the upload order
    assert sorted(keys) == keys
    threads = [threading.Thread(target=lambda: keys.append(files.put("u1", b"t", "t").key))
               for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 23
    assert [f.key for f in files.list_files("u1")][:3] == keys[:3]
    assert len(files.list_files()) == 23


@pytest.mark.parametrize("name, ext", [
    ("report.PDF", "pdf"), ("a.tar.gz", "gz"), ("noext", "bin"), (".bashrc", "bin"),
    ("x.p$p", "bin"), ("evil.sh\0.txt", "txt"), ("../../etc/passwd", "bin"),
    ("a.verylongextension", "bin"), ("C:\\dir\\photo.JPG", "jpg"), (None, "bin"),
    ("trailing.", "bin"), ("dots...", "bin")])
def test_the_extension_is_sanitised(name, ext):
    assert sanitise_extension(name) == ext


@pytest.mark.parametrize("key", [
    "../secret", "/etc/passwd", "chat/files/u1/../../../x", "chat/files/u1/\0.txt",
    "chat\\files\\u1\\1.txt", "chat/files/../files/u1/1767225600000-abcdefghjkmn.txt"])
def test_keys_that_would_leave_the_folder_are_forbidden(files, key):
    with pytest.raises(Forbidden):
        files.get(key)
    with pytest.raises(Forbidden):
        files.delete(key, who="x")


@pytest.mark.parametrize("key", [
    "", "chat/files/u1", "chat/files/u1/1767225600000-abcdefghjkmn", "chat/files/u1/x.txt",
    "chat/files/.u1/1767225600000-abcdefghjkmn.txt", "other/files/u1/1767225600000-abcdefghjkmn.txt",
    "chat/files/u1/1767225600000-ABCDEFGHJKMN.txt", "chat/files/u1/a/1767225600000-abcdefghjkmn.txt",
    "chat/files/u1/.1767225600000-abcdefghjkmn.txt"])
def test_odd_keys_are_refused_before_touching_the_disk(key):
    with pytest.raises(InvalidInput) as err:
        check_key(key)
    assert err.value.code == "invalid_key"


@pytest.mark.parametrize("user", ["", "..", ".hidden", "a/b", "a\0b", "x" * 65, "a b"])
def test_odd_user_ids_are_refused(files, user):
    with pytest.raises(InvalidInput):
        files.put(user, b"x", "a.txt")
    assert not files.root.exists() or _all_files(files.root) == []


def test_a_missing_key_is_not_found(files):
    with pytest.raises(NotFound) as err:
        files.get(new_key("u1", "a.txt"))
    assert err.value.code == "file_not_found"


def test_symlinks_in_the_upload_tree_are_never_followed(files, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    stored = files.put("u1", b"mine", "a.txt")
    planted = new_key("u1", "b.txt")
    os.symlink(secret, files.root / planted)
    with pytest.raises(Forbidden):
        files.get(planted)
    with pytest.raises(Forbidden):
        files.delete(planted, who="x")
    assert secret.read_text() == "top secret"
    (files.root / "chat/files/u2").symlink_to(files.root / "chat/files/u1")
    via_link = stored.key.replace("/u1/", "/u2/")
    with pytest.raises(Forbidden):
        files.get(via_link)
    with pytest.raises(Forbidden):
        files.put("u2", b"x", "a.txt")
    assert [f.key for f in files.list_files()] == [stored.key]


def test_deletion_is_explicit_and_logged_with_who_and_when(files):
    stored = files.put("u1", b"bye", "a.txt")
    kept = files.put("u1", b"stay", "b.txt")
    files.delete(stored.key, who="alice")
    with pytest.raises(NotFound):
        files.get(stored.key)
    assert files.get(kept.key) == b"stay"
    [entry] = files.deletions()
    assert entry["key"] == stored.key and entry["who"] == "alice" and entry["size"] == 3
    assert entry["at"].startswith(time.strftime("%Y-", time.gmtime()))
    assert json.loads(files.deletion_log.read_text().splitlines()[0]) == entry
    assert not str(files.deletion_log).startswith(str(files.root) + os.sep)

"""Original file names kept with uploads, and one error code per refused key."""

from __future__ import annotations

import json
import os
import urllib.parse

import pytest

from minarad.errors import Forbidden, InvalidInput
from minarad.files import LocalFileStore
from minarad.files.api import content_disposition
from minarad.files.keys import MAX_NAME, check_key, clean_filename

NAME = "ünï.ÇSV"


@pytest.fixture
def files(tmp_path):
    return LocalFileStore(tmp_path / "data" / "uploads", max_bytes=1 << 20)


def test_the_original_name_is_kept_and_listed(files):
    stored = files.put("u1", b"a,b\n1,2\n", NAME)
    assert stored.name == NAME and stored.key.endswith(".csv")  # the accent-free extension
    _stream, info = files.open(stored.key)
    _stream.close()
    assert info.name == NAME
    assert [(f.key, f.name) for f in files.list_files()] == [(stored.key, NAME)]
    assert files.list_files("u1")[0].to_dict()["name"] == NAME


def test_a_name_is_a_name_never_a_path(files):
    assert files.put("u1", b"x", "../../etc/passwd").name == "passwd"
    assert files.put("u1", b"x", "C:\\Users\\me\\Report.PDF").name == "Report.PDF"
    bare = files.put("u1", b"x", "..")
    assert bare.name == bare.key.rsplit("/", 1)[-1] and bare.key.endswith(".bin")
    assert not (files.root / "etc").exists()


@pytest.mark.parametrize("name", ["a\nb.txt", "tab\there.txt", "bell\x07.txt", "nul\0.txt",
                                  "evil\u202egpj.exe", "del\x7f.txt", "c1\x85.txt"])
def test_control_characters_in_a_name_are_refused_and_nothing_is_stored(files, name):
    with pytest.raises(InvalidInput) as err:
        files.put("u1", b"x", name)
    assert err.value.code == "invalid_filename"
    assert files.list_files() == [] and not any(files.root.rglob("*.*"))


def test_a_long_name_is_cut_before_its_extension(files):
    stored = files.put("u1", b"x", "é" * 400 + ".xlsx")
    assert len(stored.name) == MAX_NAME and stored.name.endswith("é.xlsx")
    assert files.list_files()[0].name == stored.name
    assert clean_filename("x" * 400) == "x" * MAX_NAME


def test_an_upload_without_a_kept_name_is_named_by_its_key(files):
    stored = files.put("u1", b"x", None)
    assert stored.name == stored.key.rsplit("/", 1)[-1]
    named = files.put("u1", b"y", "notes.md")
    sidecar = files.root / named.key.rsplit("/", 1)[0] / f".{named.key.rsplit('/', 1)[-1]}.json"
    sidecar.write_text("{not json")  # a damaged sidecar: the key names it, nothing breaks
    # both may share their millisecond, which orders them by key: compare as sets
    assert sorted(f.name for f in files.list_files()) == sorted([stored.key.rsplit("/", 1)[-1],
                                                                 named.key.rsplit("/", 1)[-1]])


def test_the_name_is_stored_beside_the_upload_and_deleted_with_it(files):
    stored = files.put("u1", b"bye", NAME)
    folder = files.root / stored.key.rsplit("/", 1)[0]
    sidecar = folder / f".{stored.key.rsplit('/', 1)[-1]}.json"
    assert json.loads(sidecar.read_text(encoding="utf-8")) == {"name": NAME}
    assert sidecar.stat().st_mode & 0o777 == 0o644
    files.delete(stored.key, who="alice")
    assert sorted(os.listdir(folder)) == []
    assert files.deletions()[0]["name"] == NAME


def test_content_disposition_has_an_ascii_fallback_and_the_exact_name():
    header = content_disposition(NAME)
    plain, _, exact = header.partition("; filename*=UTF-8''")
    assert plain == 'attachment; filename="uni.CSV"'
    assert urllib.parse.unquote(exact, encoding="utf-8") == NAME
    assert all(c.isalnum() or c in "%.-_!#$&+^`|~" for c in exact)
    odd = content_disposition('say "hi" 100%.txt')
    assert 'filename="say _hi_ 100_.txt"' in odd
    assert content_disposition("日本").startswith('attachment; filename="download"')


@pytest.mark.parametrize("key", ["chat/files/u1/../../../x", "/etc/passwd", "..\\x",
                                 "chat/files/u1/\0.txt"])
def test_a_key_leaving_the_store_has_its_own_code(key):
    with pytest.raises(Forbidden) as err:
        check_key(key)
    assert (err.value.code, err.value.http_status) == ("key_outside_store", 403)


def test_a_malformed_key_is_invalid_key_400():
    with pytest.raises(InvalidInput) as err:
        check_key("chat/files/u1/x.txt")
    assert (err.value.code, err.value.http_status) == ("invalid_key", 400)

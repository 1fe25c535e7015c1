"""Small packs merged into one: big and kept packs and loose objects stay, and a reader
that had listed (or opened) the old packs still reads every object."""

from __future__ import annotations

import os

from minarad.git.objects import read_blob
from minarad.git.packs import merge_small_packs
from minarad.git.repo import open_repo
from tests.conftest import git
from tests.git.conftest import commit_files


def _packs(root) -> set[str]:
    return {p.name for p in (root / ".git" / "objects" / "pack").glob("*.pack")}


def _objects(root) -> dict[str, str]:
    """Every object reachable, id -> type, as git sees it."""
    ids = [line.split()[0] for line in git(root, "rev-list", "--objects", "--all").splitlines()]
    return {i: git(root, "cat-file", "-t", i).strip() for i in ids}


def _repo_with_packs(root) -> tuple[set[str], str, str]:
    """A big pack, five small ones, a kept one and a loose blob; (big and kept, loose id)."""
    commit_files(root, "big", {"big.bin": os.urandom(5 << 20).hex()})  # a 5 MiB pack
    git(root, "repack", "-q", "-d")
    big = _packs(root)
    commit_files(root, "kept", {"kept.md": "kept\n"})
    git(root, "repack", "-q", "-d")
    kept = (_packs(root) - big).pop()
    (root / ".git" / "objects" / "pack" / kept.replace(".pack", ".keep")).touch()
    for n in range(5):
        commit_files(root, f"small {n}", {f"f{n}.md": f"file {n}\n"})
        git(root, "repack", "-q", "-d")
    return big | {kept}, kept, _write_loose(root)


def _write_loose(root) -> str:
    path = root / "loose.txt"
    path.write_text("a loose object\n")
    return git(root, "hash-object", "-w", str(path)).strip()


def test_small_packs_merge_into_one_and_the_rest_stays(repo_dir):
    untouched, kept, loose = _repo_with_packs(repo_dir)
    before = _objects(repo_dir)
    listed = open_repo(repo_dir)  # a reader that listed the packs, opened none
    listed.object_store.packs  # noqa: B018 - lists them
    opened = open_repo(repo_dir)  # a reader that read from every pack already
    for oid in before:
        opened.object_store[oid.encode()]
    packs_before = _packs(repo_dir)
    writer = open_repo(repo_dir)
    try:
        assert merge_small_packs(writer, limit=2) == 5
        assert merge_small_packs(writer, limit=2) == 0  # one small pack left: nothing to do
    finally:
        writer.close()
    after = _packs(repo_dir)
    assert untouched <= after and len(after) == len(untouched) + 1, (packs_before, after)
    assert (repo_dir / ".git" / "objects" / "pack" / kept.replace(".pack", ".keep")).exists()
    assert (repo_dir / ".git" / "objects" / loose[:2] / loose[2:]).exists()
    assert not list((repo_dir / ".git" / "objects" / "pack").glob("tmp_*"))
    git(repo_dir, "fsck", "--strict", "--no-progress")
    assert _objects(repo_dir) == before
    for reader in (listed, opened):
        for oid, kind in before.items():
            assert reader.object_store[oid.encode()].type_name.decode() == kind
        assert read_blob(reader.object_store, loose) == b"a loose object\n"
        reader.close()


def test_few_small_packs_are_left_alone(repo_dir):
    for n in range(3):
        commit_files(repo_dir, f"small {n}", {f"f{n}.md": f"file {n}\n"})
        git(repo_dir, "repack", "-q", "-d")
    before = _packs(repo_dir)
    repo = open_repo(repo_dir)
    try:
        assert merge_small_packs(repo, limit=3) == 0
    finally:
        repo.close()
    assert _packs(repo_dir) == before


def test_a_folder_remotes_packs_are_read_in_the_middle_of_a_merge(repo_dir, tmp_path):
    """Between deleting a merged pack's ``.pack`` and its ``.idx``, readers of a folder
    remote's object store (sync's size guard and streaming copy) use the merged pack."""
    from minarad.git.bigobjects import copy_object
    from minarad.git.fetchguard import stored_size

    for n in range(4):
        commit_files(repo_dir, f"small {n}", {f"f{n}.md": f"file {n}\n" * (n + 1)})
        git(repo_dir, "repack", "-q", "-d")
    pack_dir = repo_dir / ".git" / "objects" / "pack"
    old_indexes = {p.name: p.read_bytes() for p in pack_dir.glob("*.idx")}
    repo = open_repo(repo_dir)
    fmt = repo.object_store.object_format
    try:
        assert merge_small_packs(repo, limit=2) == 4
    finally:
        repo.close()
    for name, data in old_indexes.items():  # their packs deleted, their indexes not yet
        (pack_dir / name).write_bytes(data)
    blob = git(repo_dir, "rev-parse", "HEAD:f3.md").strip()
    objects = str(repo_dir / ".git" / "objects")
    assert stored_size(objects, blob, fmt) == len("file 3\n" * 4)
    assert copy_object(objects, blob, str(tmp_path / "copy"), fmt) == "blob"
    assert (tmp_path / "copy" / blob[:2] / blob[2:]).exists()


def _entries(pack_path) -> list[bytes]:
    """The raw entries of a pack (header and compressed data), as ``git verify-pack`` lists
    them."""
    data = pack_path.read_bytes()
    rows = []
    for line in git(pack_path.parent, "verify-pack", "-v", str(pack_path)).splitlines():
        parts = line.split()
        if len(parts) >= 5 and len(parts[0]) == 40 and parts[3].isdigit():
            rows.append((int(parts[4]), int(parts[3])))  # offset, size in pack
    return [data[offset:offset + size] for offset, size in sorted(rows)]


def _write_stored_pack(pack_dir, objects, object_format) -> None:
    """A pack of whole objects compressed at level 0 (as no merge would write them)."""
    import io

    from dulwich.pack import write_pack_index, write_pack_objects

    buf = io.BytesIO()
    entries, checksum = write_pack_objects(buf, [(o, None) for o in objects], object_format,
                                           compression_level=0)
    base = pack_dir / f"pack-{checksum.hex()}"
    base.with_suffix(".pack").write_bytes(buf.getvalue())
    with open(base.with_suffix(".idx"), "wb") as fh:
        write_pack_index(fh, sorted((k, v[0], v[1]) for k, v in entries.items()), checksum)


def test_round_packs_are_merged_by_copying_their_entries(repo_dir):
    """Packs of whole objects (as rounds write them) are merged without recompressing:
    each entry of the merged pack is an entry of a small pack, byte for byte (here
    stored at compression level 0, which no rewrite would keep); an object in two
    packs is kept once."""
    from dulwich.objects import Blob

    commit_files(repo_dir, "seed", {"a.md": "a\n"})
    repo = open_repo(repo_dir)
    pack_dir = repo_dir / ".git" / "objects" / "pack"
    shared = Blob.from_string(b"in two packs\n")
    try:
        for n in range(4):
            blob = Blob.from_string(f"round {n}\n".encode() * (n + 1))
            _write_stored_pack(pack_dir, [blob, shared], repo.object_store.object_format)
        sources = {entry for pack in pack_dir.glob("*.pack") for entry in _entries(pack)}
        assert merge_small_packs(repo, limit=2) == 4
        merged = [p for p in pack_dir.glob("*.pack")]
        assert len(merged) == 1
        entries = _entries(merged[0])
        assert len(entries) == 5 and set(entries) <= sources
        assert read_blob(repo.object_store, shared.id.decode()) == b"in two packs\n"
    finally:
        repo.close()
    git(repo_dir, "fsck", "--strict", "--no-progress")
    assert git(repo_dir, "cat-file", "-p", shared.id.decode()) == "in two packs\n"


def test_packs_holding_deltas_are_merged_too(repo_dir):
    """A small pack with deltas (as git packs similar versions) is merged by reading its
    objects: every object stays readable and git finds the repository sound."""
    text = "".join(f"line {i} of a long enough page\n" for i in range(400))
    commit_files(repo_dir, "v1", {"page.md": text})
    commit_files(repo_dir, "v2", {"page.md": text + "one more line\n"})
    git(repo_dir, "repack", "-q", "-d")
    pack_dir = repo_dir / ".git" / "objects" / "pack"
    assert "delta" in git(repo_dir, "verify-pack", "-v",
                          str(next(pack_dir.glob("*.pack")))).lower()
    for n in range(2):
        commit_files(repo_dir, f"small {n}", {f"f{n}.md": f"file {n}\n"})
        git(repo_dir, "repack", "-q", "-d")
    before = _objects(repo_dir)
    repo = open_repo(repo_dir)
    try:
        assert merge_small_packs(repo, limit=2) == 3
    finally:
        repo.close()
    assert len(_packs(repo_dir)) == 1
    git(repo_dir, "fsck", "--strict", "--no-progress")
    assert _objects(repo_dir) == before

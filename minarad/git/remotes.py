"""Remotes: kept in the repository's own ``.git/config`` (so stock git sees them),
fetched from and pushed to with dulwich's client (a folder, ``file://``,
``ssh://``, ``git://``, ``http(s)://``).

Credentials for http(s) come, in this order, from the URL
(``https://user:token@host/repo.git``), from the caller (an environment
setting), or from git's credential helper when one is configured.
A push is a compare-and-swap: it names the commit the remote branch held
when fetched, and a remote that moved meanwhile refuses it
(:class:`PushRejected`), so the caller fetches and merges again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from minarad.errors import InvalidInput, MinaraError, NotFound
from minarad.git.fetchguard import FetchLimits, ObjectTooLarge, checked_local, \
    guarded_network_fetch
from minarad.git.fsckobjects import HostileObject, check_fetched
from minarad.git.objects import add_pack_written, has_commit
from minarad.git.quarantine import admit, new_object_ids, quarantine

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from minarad.git.types import ObjectStore, Repo
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class PushRejected(MinaraError):
    """The remote branch moved since it was fetched (another machine pushed first)."""

    code = "push_rejected"


class RemoteUnreachable(MinaraError):
    """The remote could not be reached, or refused the connection or the credentials."""

    code = "remote_unreachable"


@dataclasses.dataclass(frozen=True)
class Credentials:
    """A user name and password (or token) for http(s) remotes; both optional."""

    username: str | None = None
    password: str | None = None


def check_remote_name(name: str) -> str:
    """Return ``name`` if it can name a remote (letters, digits, ``.``, ``_``, ``-``).

    Raises:
        InvalidInput: it cannot.
    """
    if not _NAME_RE.match(name or ""):
        raise InvalidInput(f"{name!r} cannot name a remote (use letters, digits, '.', '_' "
                           f"and '-')", code="invalid_remote_name")
    return name


def list_remotes(repo: Repo) -> dict[str, str]:
    """Return every remote of ``repo`` as name -> URL, from ``.git/config``."""
    config = repo.get_config()
    found = {}
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                found[section[1].decode()] = config.get(section, b"url").decode()
            except KeyError:
                continue
    return dict(sorted(found.items()))


def remote_url(repo: Repo, name: str) -> str:
    """Return the URL of remote ``name``.

    Raises:
        NotFound: there is no such remote (``remote_not_found``).
    """
    url = list_remotes(repo).get(name)
    if url is None:
        raise NotFound(f"no remote named {name!r} (add one with `minara remote add {name} URL`)",
                       code="remote_not_found", remote=name)
    return url


def add_remote(repo: Repo, name: str, url: str) -> None:
    """Add remote ``name`` at ``url`` as ``git remote add`` does.

    Raises:
        InvalidInput: the name is refused, the URL is empty or the remote exists.
    """
    check_remote_name(name)
    if not url.strip():
        raise InvalidInput("the remote URL is empty", code="invalid_remote_url")
    if name in list_remotes(repo):
        raise InvalidInput(f"a remote named {name!r} exists already (remove it first)",
                           code="remote_exists", remote=name)
    config = repo.get_config()
    section = (b"remote", name.encode())
    config.set(section, b"url", url.encode())
    config.set(section, b"fetch", f"+refs/heads/*:refs/remotes/{name}/*".encode())
    config.write_to_path()


def remove_remote(repo: Repo, name: str) -> None:
    """Remove remote ``name`` and its remote-tracking branches.

    Raises:
        NotFound: there is no such remote.
    """
    remote_url(repo, name)
    config = repo.get_config()
    del config[(b"remote", name.encode())]
    config.write_to_path()
    prefix = f"refs/remotes/{name}/".encode()
    for ref in [r for r in repo.refs.allkeys() if r.startswith(prefix)]:
        repo.refs.remove_if_equals(ref, None)


def tracking_ref(name: str, branch: str) -> bytes:
    """The remote-tracking ref of ``branch`` on remote ``name`` (``refs/remotes/origin/main``)."""
    return f"refs/remotes/{name}/{branch}".encode()


def set_tracking(repo: Repo, name: str, branch: str, commit: str) -> None:
    """Record that remote ``name``'s ``branch`` is at ``commit`` (after a push)."""
    repo.refs[tracking_ref(name, branch)] = commit.encode()


def read_tracking(repo: Repo, name: str, branch: str) -> str | None:
    """The commit the remote-tracking branch holds (hex), or None.

    None too when it names a commit this repository lacks (the next fetch
    records the remote's commit again).
    """
    try:
        commit = repo.refs[tracking_ref(name, branch)].decode()
    except KeyError:
        return None
    return commit if has_commit(repo, commit) else None


def _client(repo: Repo, url: str, operation: str,
            creds: Credentials | None) -> tuple[Any, str]:
    from dulwich.client import get_transport_and_path

    username = password = None
    if urlsplit(url).scheme in ("http", "https"):
        parts = urlsplit(url)
        if not parts.password:
            creds = creds if creds and creds.password else credential_helper(url)
            if creds is not None:
                username, password = creds.username or parts.username or "git", creds.password
    try:
        return get_transport_and_path(url, config=repo.get_config_stack(), operation=operation,
                                      username=username, password=password, quiet=True)
    except (ValueError, ImportError) as exc:
        raise InvalidInput(f"cannot use remote URL {shown_url(url)!r}: {exc}",
                           code="invalid_remote_url") from None


def credential_helper(url: str) -> Credentials | None:
    """Ask git's credential helper for ``url``'s credentials, when one is configured.

    Returns None when git is missing, no helper is configured or it knows none.
    """
    try:
        helpers = subprocess.run(["git", "config", "--get-all", "credential.helper"],
                                 capture_output=True, text=True, timeout=5).stdout.strip()
        if not helpers:
            return None
        parts = urlsplit(url)
        query = f"protocol={parts.scheme}\nhost={parts.netloc}\npath={parts.path.lstrip('/')}\n\n"
        out = subprocess.run(["git", "credential", "fill"], input=query, capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return Credentials(fields.get("username"), fields["password"]) if "password" in fields \
        else None


def shown_url(url: str) -> str:
    """``url`` with any password in it masked (``https://user:***@host/...``)."""
    return re.sub(r"//([^/@:]*):[^/@]*@", r"//\1:***@", url)


def _unreachable(url: str, exc: BaseException) -> RemoteUnreachable:
    shown = shown_url(url)
    return RemoteUnreachable(f"remote {shown} is unreachable: {exc}", url=shown)


def ls_remote(repo: Repo, url: str, creds: Credentials | None = None) -> dict[str, str]:
    """The remote's refs (name -> commit), as ``git ls-remote`` lists them.

    Raises:
        RemoteUnreachable: the remote could not be reached or refused.
    """
    client, path = _client(repo, url, "pull", creds)
    try:
        result = client.get_refs(path)
    except Exception as exc:  # dulwich raises many kinds
        raise _unreachable(url, exc) from None
    refs = getattr(result, "refs", result)
    return {k.decode(): v.decode() for k, v in refs.items() if v}


def fetch(repo: Repo, name: str, url: str, branch: str,
          creds: Credentials | None = None, limits: FetchLimits | None = None) -> str | None:
    """Fetch ``branch`` of remote ``name`` into ``repo``; update its remote-tracking ref.

    With ``limits``, every object's size is checked from its header before it
    is read (:mod:`minarad.git.fetchguard`), and a remote commit refused
    before is not fetched again.

    Returns:
        The commit the remote branch holds (hex), or None when it does not exist yet.

    The objects wait in a quarantine until checked (:mod:`minarad.git.fsckobjects`):
    a commit git itself would refuse is refused, and nothing of it is kept.

    Raises:
        RemoteUnreachable: the remote could not be reached or refused.
        ObjectTooLarge: the remote holds an object over the limit (``file_too_large``).
        HostileObject: the remote's commit holds an object git would refuse.
    """
    client, path = _client(repo, url, "pull", creds)
    want = f"refs/heads/{branch}".encode()
    ref = tracking_ref(name, branch)
    seen: list[bytes | None] = []

    def determine_wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
        sha = refs.get(want)
        seen.append(sha)
        if sha and limits and sha.decode() in limits.refused:
            return []
        return [sha] if sha and sha not in repo.object_store else []

    with quarantine(repo) as held:
        try:
            result = _fetch_from(client, path, cast("Repo", held), determine_wants, limits,
                                 seen)
        except MinaraError:
            raise
        except Exception as exc:  # dulwich raises many kinds: OSError, HangupException, ...
            raise _unreachable(url, exc) from None
        if seen and seen[-1] and limits and seen[-1].decode() in limits.refused:
            raise refused_again(seen[-1].decode(), *limits.refused[seen[-1].decode()])
        tip = seen[-1] if seen else None
        if tip and tip not in repo.object_store:
            check_fetched(held.object_store, repo.object_store, tip, new_object_ids(held))
        admit(repo, held)
    # The refs as negotiated, not ``result.refs``: a local remote answers with its
    # refs read again after the pack was made, which may name a commit pushed
    # meanwhile whose objects this fetch did not bring.
    sha = seen[-1] if seen else result.refs.get(want)
    if not sha:
        repo.refs.remove_if_equals(ref, None)
        return None
    if not has_commit(repo, sha.decode()):
        raise RemoteUnreachable(f"remote {shown_url(url)} sent no commit {sha.decode()} for "
                                f"{branch}; try again", url=shown_url(url))
    repo.refs[ref] = sha
    return sha.decode()


def refused_again(commit: str, code: str, message: str) -> MinaraError:
    """The answer of a fetch that found the remote's branch still at ``commit``, refused
    before with ``code`` and ``message``: nothing was fetched or checked again."""
    again = " (refused before: not fetched again until the remote's branch moves)"
    text = message if message.endswith(again) else message + again
    kind = ObjectTooLarge if code == ObjectTooLarge.code else HostileObject
    return kind(text, code=code, commit=commit)


def push(repo: Repo, url: str, branch: str, new: str, expected: str | None,
         creds: Credentials | None = None) -> None:
    """Move the remote's ``branch`` from ``expected`` to ``new``, sending the missing objects.

    Raises:
        PushRejected: the remote branch is no longer at ``expected``.
        RemoteUnreachable: the remote could not be reached or refused.
    """
    from dulwich.client import LocalGitClient
    from dulwich.errors import HangupException

    client, path = _client(repo, url, "push", creds)
    ref = f"refs/heads/{branch}".encode()
    moved = []

    def update_refs(refs: dict[bytes, bytes]) -> dict[bytes, bytes]:
        current = refs.get(ref)
        if (current.decode() if current else None) != expected:
            moved.append(current)
            return {}
        return {ref: new.encode()}

    try:
        if isinstance(client, LocalGitClient):
            result = _send_local(path, repo.object_store, update_refs)
        else:
            result = client.send_pack(path, update_refs, _whole_objects(repo.object_store))
    except HangupException as exc:
        raise _unreachable(url, exc) from None
    except MinaraError:
        raise
    except Exception as exc:
        if "lock" in str(exc) or "non-fast-forward" in str(exc) or "stale" in str(exc):
            raise PushRejected(f"the remote's {branch} moved while pushing: {exc}") from None
        raise _unreachable(url, exc) from None
    if moved:
        raise PushRejected(f"the remote's {branch} moved since it was fetched")
    error = (result.ref_status or {}).get(ref)
    if error:
        raise PushRejected(f"the remote refused {branch}: {error}")
    if expected is None:
        _default_branch(client, path, ref)


def _whole_objects(store: ObjectStore) -> Callable[..., tuple[int, Any]]:
    """A ``generate_pack_data`` for ``store`` that sends the missing objects whole.

    dulwich's own reads every object of the store's packs to find deltas it
    could reuse, which costs by the size of the repository (21,758 objects
    read to send 300), and walks every tree of the commits the remote has;
    here the objects are found by what the new commits changed
    (:mod:`minarad.git.missing`) and sent whole: the cost is by what is sent.
    """
    def generate(have: Any, want: Any, *, shallow: Any = None, progress: Any = None,
                 ofs_delta: bool = True) -> tuple[int, Any]:
        return _packed_whole(store, _missing(store, want, have, shallow), ofs_delta)

    return generate


def _send_local(path: str, store: ObjectStore,
                update_refs: Callable[[dict[bytes, bytes]], dict[bytes, bytes]]) -> Any:
    """``send_pack`` to a repository in a folder: the missing objects go in as one pack
    whose index comes from the writing (:func:`minarad.git.objects.add_pack_written`),
    then each ref moves only if it still holds what it held when read (compare and
    swap); one that moved meanwhile is in the result's ``ref_status``."""
    from dulwich.client import SendPackResult
    from dulwich.protocol import ZERO_SHA
    from dulwich.repo import Repo

    with contextlib.closing(Repo(path)) as target:
        old_refs = cast("dict[bytes, bytes]", target.get_refs())
        new_refs = update_refs(dict(old_refs))
        have = {sha for sha in old_refs.values() if sha != ZERO_SHA}
        want = [sha for sha in dict.fromkeys(new_refs.values())
                if sha not in have and sha != ZERO_SHA]
        if want:
            add_pack_written(target.object_store,
                             *_packed_whole(store, _missing(store, want, have)))
        status: dict[bytes, str | None] = {}
        refs: Any = target.refs
        for ref, sha in new_refs.items():
            old = old_refs.get(ref, ZERO_SHA)
            moved = not (refs.set_if_equals(ref, old, sha) if sha != ZERO_SHA
                         else refs.remove_if_equals(ref, old))
            if moved:
                status[ref] = f"unable to set {ref!r} to {sha!r}"
        return SendPackResult(cast(Any, new_refs), ref_status=status)


def _missing(store: ObjectStore, wants: Any, haves: Any, shallow: Any = None) -> list[Any]:
    """The objects of ``wants`` a side holding ``haves`` lacks (``(sha, hint)`` pairs).

    A shallow history (graft commits whose parents are not here), a missing
    commit or one that cannot be ordered (a malformed one, which the fetch's
    checks then refuse) is left to dulwich's own finder, as before.
    """
    from dulwich.object_store import MissingObjectFinder

    from minarad.git.missing import missing_objects

    if not shallow:
        try:
            return missing_objects(store, wants, haves)
        except Exception:  # dulwich raises many kinds; its own way is the fallback
            pass
    return list(MissingObjectFinder(store, haves=haves, wants=wants, shallow=shallow))


def _packed_whole(store: ObjectStore, ids: list[Any], ofs_delta: bool = True
                  ) -> tuple[int, Any]:
    """``(count, pack data)`` of the objects ``ids`` (``(sha, hint)`` pairs), none a delta.

    Each object is read raw, not parsed into a dulwich object (a tree's
    entries sorted and wrapped) only to be serialised again; its content is
    still hashed and checked against its id, as parsing it did.
    """
    from dulwich.pack import UnpackedObject, generate_unpacked_objects

    if getattr(getattr(store, "object_format", None), "name", "sha1") != "sha1":
        return len(ids), generate_unpacked_objects(store, ids, reuse_deltas=False,
                                                   ofs_delta=ofs_delta)

    def records() -> Iterator[Any]:
        for sha, _hint in ids:
            type_num, raw = store.get_raw(sha)
            record = UnpackedObject(type_num, decomp_chunks=[raw])
            if record.sha().hex().encode("ascii") != sha:
                raise InvalidInput(f"git object {sha.decode()} does not hash to its id: the "
                                   f"repository holding it is damaged (`git fsck` shows what "
                                   f"is broken)", code="object_damaged", object=sha.decode())
            yield record

    return len(ids), records()


def _fetch_from(client: Any, path: str, repo: Repo, determine_wants: Any,
                limits: FetchLimits | None = None, seen: list | None = None) -> Any:
    """``client.fetch``; from a folder, with the objects read whole (see :func:`_whole_objects`).

    Over a network the server makes the pack; from a folder dulwich makes it
    here, and its way reads the whole remote store to reuse deltas. With
    ``limits``, sizes are checked first (``seen``: the remote commits wanted,
    named in a refusal).
    """
    from dulwich.client import FetchPackResult, LocalGitClient

    if not isinstance(client, LocalGitClient):
        if limits is None:
            return client.fetch(path, repo, determine_wants=determine_wants)
        return guarded_network_fetch(client, path, repo, determine_wants, limits,
                                     seen if seen is not None else [])
    from dulwich.repo import Repo

    with contextlib.closing(Repo(path)) as remote:
        wants = determine_wants(remote.get_refs())
        if wants:
            # what both sides hold (a ref here may name a commit an earlier fetch lacked)
            ours = [sha for sha in repo.refs.as_dict().values()
                    if sha in repo.object_store and sha in remote.object_store]
            wanted, big = _missing(remote.object_store, wants, ours), cast("list[str]", [])
            if limits is not None:
                wanted, big = checked_local(remote, wanted, limits)
            add_pack_written(repo.object_store, *_packed_whole(remote.object_store, wanted))
            _copy_big(remote, repo, big)
        refs: dict[Ref, ObjectID | None] = dict(remote.get_refs())
        return FetchPackResult(refs, remote.refs.get_symrefs(), b"minarad")


def _copy_big(remote: Any, repo: Repo, big: list[str]) -> None:
    """Copy the objects over the fetch's limit a chunk at a time (never held whole)."""
    from minarad.git.bigobjects import DamagedObject, copy_object

    for sha in big:
        try:
            copy_object(remote.object_store.path, sha, repo.object_store.path,
                        remote.object_store.object_format)
        except DamagedObject as exc:
            raise InvalidInput(f"the remote's object {sha[:10]} could not be copied: {exc}",
                               code="remote_object_damaged", object=sha) from None


def _default_branch(client: Any, path: str, ref: bytes) -> None:
    """Point a local bare remote's HEAD at ``ref`` when it names a branch that does not exist.

    ``git init --bare`` leaves HEAD naming ``master`` (or ``init.defaultBranch``);
    after a first push of another branch, ``git clone`` of that remote checks
    out nothing. Hosting services set the default branch on the first push;
    this does the same for a remote in a folder. Other transports cannot
    change a remote's HEAD, and a HEAD naming an existing branch is left alone.
    """
    from dulwich.client import LocalGitClient
    from dulwich.repo import Repo

    if not isinstance(client, LocalGitClient):
        return
    head_ref = cast("Ref", b"HEAD")
    try:
        with Repo(path) as remote:
            head = remote.refs.read_ref(head_ref)
            if head and head.startswith(b"ref: ") and \
                    cast("Ref", head[5:].strip()) not in remote.refs.keys():
                remote.refs.set_symbolic_ref(head_ref, cast("Ref", ref))
    except OSError:
        return  # the push landed; the remote's HEAD is a convenience for its clones

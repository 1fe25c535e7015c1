"""Where the daemon's socket lives: one per workspace, in a folder only its user can enter.

The folder is ``$XDG_RUNTIME_DIR/minara/`` (else ``/run/user/<uid>/minara/``)
when that runtime folder exists, is ours and is closed to others;
otherwise ``/tmp/minara-<uid>/``. Either is mode 0700 and must be owned by
the user: a folder someone else made, or a symbolic link, is never used.
The socket's name carries a short hash of the workspace's real path
(socket paths are limited to 108 bytes). The client imports this module,
so it uses nothing beyond ``os`` and ``stat``.
"""

import os
import stat

#: The socket's mode and its folder's.
SOCKET_MODE = 0o600
FOLDER_MODE = 0o700


def _private_dir(path: str, uid: int) -> bool:
    """True when ``path`` is a real folder owned by ``uid`` that no one else may write to."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == uid
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _closed_dir(path: str, uid: int) -> bool:
    """True when ``path`` is a real folder owned by ``uid`` with mode 0700."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == uid
            and stat.S_IMODE(st.st_mode) == FOLDER_MODE)


def socket_folder(env, *, create: bool = False) -> str | None:
    """The folder of this user's sockets, or None when no safe one exists (yet).

    Args:
        env: the environment (``XDG_RUNTIME_DIR``).
        create: make the folder (mode 0700) when it is missing.
    """
    uid = os.getuid()
    candidates = []
    for base in (env.get("XDG_RUNTIME_DIR"), f"/run/user/{uid}"):
        if base and os.path.isabs(base) and _private_dir(base, uid):
            candidates.append(os.path.join(base, "minara"))
            break
    candidates.append(f"/tmp/minara-{uid}")
    for folder in candidates:
        if create and not os.path.lexists(folder):
            try:
                os.mkdir(folder, FOLDER_MODE)
            except FileExistsError:
                pass
            except OSError:
                continue
        if _closed_dir(folder, uid):
            return folder
        if os.path.lexists(folder):
            continue  # not ours, or opened to others: never used
    return None


def workspace_key(workspace: str) -> str:
    """A short hash of the workspace's real path (the socket's name).

    64-bit FNV-1a, in Python: loading a hash module costs the client more
    than hashing a path (the name needs no secrecy: the folder is private).
    """
    real = os.fsencode(os.path.realpath(os.path.expanduser(workspace)))
    value = 0xCBF29CE484222325
    for byte in real:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def socket_path(env, workspace: str, *, create: bool = False) -> str | None:
    """The socket of ``workspace`` (None when there is no safe folder for it).

    Args:
        env: the environment (``XDG_RUNTIME_DIR``).
        workspace: the workspace folder (``~`` and links resolved here).
        create: make the folder when it is missing (the daemon does).
    """
    folder = socket_folder(env, create=create)
    if folder is None:
        return None
    return os.path.join(folder, f"ws-{workspace_key(workspace)}.sock")

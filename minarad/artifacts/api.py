"""What an HTTP layer needs from the artifact store, with no web framework.

Each function takes the opened :class:`minarad.app.Minara` and returns
JSON-ready data, or ``(body, headers)`` for a file; errors are
:class:`minarad.errors.MinaraError` (``http_status`` says the status).
"""

from __future__ import annotations

import errno
import os
import re

from minarad.artifacts.store import check_id
from minarad.errors import Forbidden, NotFound

#: Files of a materialized artifact that may be served, and their content types.
_SERVED = re.compile(r"^(index\.html|artifact\.json|data\.csv|chart-[1-9][0-9]{0,3}\.png)$")
_TYPES = {".html": "text/html; charset=utf-8", ".json": "application/json",
          ".csv": "text/csv; charset=utf-8", ".png": "image/png"}
#: Served with every artifact file: no sniffing, nothing loaded from elsewhere.
SAFE_HEADERS = {"X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
                                           "style-src 'unsafe-inline'; img-src data:",
                "Cache-Control": "no-cache"}


def get_artifact(app, artifact_id: str, *, session: str | None = None) -> dict:
    """The artifact with its audit trail (``artifact_not_found`` with hints if unknown)."""
    store = app.artifacts
    artifact = store.get(check_id(artifact_id), session=session)
    return {**artifact.to_dict(),
            "audit": [vars(t) for t in store.audit(artifact.id)]}


def list_artifacts(app, *, session: str | None = None, type_: str | None = None,
                   state: str | None = None, limit: int = 100) -> dict:
    """Artifacts newest first, without their data."""
    found = app.artifacts.list_artifacts(session=session, type_=type_, state=state, limit=limit)
    return {"artifacts": [a.to_dict(with_data=False) for a in found]}


def resolve_uri(app, uri: str, *, session: str | None = None) -> dict:
    """The completed artifact a URI names (see :meth:`ArtifactStore.resolve`)."""
    return app.artifacts.resolve(uri, session=session).to_dict()


def materialize_message(app, message: str, *, session: str | None = None) -> dict:
    """Materialize every artifact URI in ``message``; one outcome per URI."""
    from minarad.artifacts.chromium import find_chromium
    from minarad.artifacts.materialize import materialize

    outcomes = materialize(app.artifacts, message, app.artifacts_dir,
                           chromium=find_chromium(app.settings.chromium), session=session)
    return {"artifacts": [o.to_dict() for o in outcomes]}


def artifact_file(app, artifact_id: str, name: str = "index.html") -> tuple[bytes, dict]:
    """One materialized file of an artifact, with the headers to serve it with.

    Raises:
        InvalidInput: a malformed id.
        Forbidden: a file name that is not one the materializer writes.
        NotFound: not materialized (yet), or no such file.
    """
    check_id(artifact_id)
    if not _SERVED.match(name):
        raise Forbidden(f"{name!r} is not a file of a materialized artifact",
                        code="invalid_artifact_file")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:  # neither the artifact's folder nor the file may be a symlink
        dir_fd = os.open(app.artifacts_dir / artifact_id, flags | os.O_DIRECTORY)
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(f"{artifact_id}/{name} is not materialized; run "
                       f"`minara artifact materialize`", code="artifact_file_not_found",
                       id=artifact_id, file=name) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{artifact_id}/{name}: a symlink; refused", code="symlink") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        body = fh.read()
    headers = {**SAFE_HEADERS, "Content-Type": _TYPES[os.path.splitext(name)[1]],
               "Content-Length": str(len(body))}
    return body, headers

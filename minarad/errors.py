"""The one exception hierarchy of minarad.

Library code raises these; the CLI (``minarad.cli``) and the HTTP gateway
translate them in one place each. Every error carries a stable machine
``code`` (snake_case), a CLI ``exit_code`` and an HTTP ``http_status``.
"""

from __future__ import annotations


class MinaraError(Exception):
    """Any error a user should see as one clear line (exit 1)."""

    code = "error"
    exit_code = 1
    http_status = 500

    def __init__(self, message: str, *, code: str | None = None, **details):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details

    def to_dict(self) -> dict:
        """Return the error as a JSON-ready mapping."""
        return {"error": self.code, "message": self.message, **self.details}


class InvalidInput(MinaraError):
    """Bad content or arguments: invalid UTF-8, binary, too large, bad version."""

    code = "invalid_input"
    exit_code = 1
    http_status = 400


class VersionConflict(MinaraError):
    """A write carried a base that is no longer the file's current version."""

    code = "memory_version_conflict"
    exit_code = 3
    http_status = 409


class NotFound(MinaraError):
    """A file, version or object that does not exist."""

    code = "not_found"
    exit_code = 4
    http_status = 404


class Forbidden(MinaraError):
    """A path outside the workspace, inside ``.git/``, or behind a symlink."""

    code = "forbidden"
    exit_code = 5
    http_status = 403


class Busy(MinaraError):
    """The repository is in a state minarad must not touch (merge, rebase, lock)."""

    code = "repository_busy"
    exit_code = 1
    http_status = 503

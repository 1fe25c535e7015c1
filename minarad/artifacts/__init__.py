"""Artifacts: charts, spreadsheets and reports an agent makes during a turn.

They live outside the workspace, in the data folder: rows in one SQLite
file (:class:`ArtifactStore`), browsable copies under ``<data>/artifacts/<id>/``
(:func:`minarad.artifacts.materialize.materialize`). An agent names them in
its messages by URI: ``chart://x-...``, ``spreadsheet://x-...``, ``report://r-...``.
"""

from __future__ import annotations

from minarad.artifacts.models import (
    COMPLETED, ERROR, RUNNING, Artifact, ArtifactNotCompleted, ArtifactNotFound,
    ArtifactTypeMismatch, InvalidTransition, Transition, find_uris, parse_uri)
from minarad.artifacts.store import ArtifactStore

__all__ = ["COMPLETED", "ERROR", "RUNNING", "Artifact", "ArtifactNotCompleted",
           "ArtifactNotFound", "ArtifactStore", "ArtifactTypeMismatch", "InvalidTransition",
           "Transition", "find_uris", "parse_uri"]

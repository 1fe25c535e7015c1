"""The file store: user uploads under ``<data>/uploads/``, outside the workspace.

Uploads are kept, never executed or interpreted: :class:`LocalFileStore`
stores and serves bytes; :mod:`minarad.files.sheets` turns a CSV, TSV or
XLSX into Markdown tables for an agent to read.
"""

from __future__ import annotations

from minarad.files.local import FileTooLarge, LocalFileStore, StoredFile

__all__ = ["FileTooLarge", "LocalFileStore", "StoredFile"]

"""``minara secrets``: credentials in the workspace's files and history (detection only)."""

from __future__ import annotations

import os

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.errors import MinaraError, NotFound


@click.group("secrets")
def secrets() -> None:
    """Credentials in the workspace: find them (writes are not checked yet).

    Example: minara secrets scan --history
    """


@secrets.command("scan")
@click.argument("paths", nargs=-1)
@click.option("--history", is_flag=True,
              help="Also scan every commit reachable from a ref (each blob once).")
@json_option
@pass_ctx
def scan(ctx: CliContext, paths: tuple[str, ...], history: bool) -> None:
    """List credentials in the workspace's files (PATHS: files or folders; default all).

    Each finding names the path (and commit with --history), line, column,
    rule and fingerprint, never the value. A fingerprint, a rule with path
    globs or 'regex: PATTERN' in .minara-secrets-allow allows a finding; so
    does 'minara:allow-secret' on its line. Exits 1 when anything is found.

    Example: minara secrets scan memory/ --history --json
    """
    from minarad.secrets import load_allowlist
    from minarad.secrets.workspace import scan_files, scan_history

    root = ctx.app.root
    allow = load_allowlist(root)
    rels = [os.path.relpath(os.path.abspath(p), root) if os.path.isabs(p) else p for p in paths]
    missing = [p for p, rel in zip(paths, rels, strict=True)
               if rel.startswith("..") or not os.path.exists(os.path.join(root, rel))]
    if missing:
        raise NotFound(f"not in the workspace: {', '.join(missing)}", code="not_found")
    found = scan_files(root, rels, allow=allow)
    if history:
        found += scan_history(root, allow=allow)
    lines = [str(f) for f in found] + [f"warning: {p}" for p in allow.problems]
    emit(ctx, {"findings": [f.to_dict() for f in found],
               "allowlist_problems": [str(p) for p in allow.problems]},
         "\n".join(lines) if lines else "no credentials found")
    if found:
        raise MinaraError(f"{len(found)} credential(s) found; allow one with its fingerprint "
                          f"in .minara-secrets-allow", code="secrets_found")

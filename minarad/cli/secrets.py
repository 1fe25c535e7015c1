"""``minara secrets``: credentials in the workspace's files and history: find, purge."""

from __future__ import annotations

import os

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx
from minarad.errors import MinaraError, NotFound


@click.group("secrets")
def secrets() -> None:
    """Credentials in the workspace: find them, erase them from history.

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


@secrets.command("purge")
@click.argument("fingerprints", nargs=-1, required=True)
@click.option("--yes", is_flag=True, help="Confirm: history is rewritten, with no undo.")
@click.option("--force", is_flag=True, help="Purge even though the workspace has a remote.")
@json_option
@pass_ctx
def purge(ctx: CliContext, fingerprints: tuple[str, ...], yes: bool, force: bool) -> None:
    """Erase credentials from every commit and file, by fingerprint (from a finding).

    Each version of each file that held the value is rewritten with
    [REDACTED:<rule>] in its place (the rest of the file and its history
    stay), as is the file on disk; reflogs are emptied and the old objects
    removed, so no object of the repository holds it. This cannot be undone,
    and other clones keep the old commits: with a remote configured it is
    refused unless --force (then push with care: the remote refuses a
    rewritten branch). Rotate the credential too: it was on disk.

    Example: minara secrets purge 6e2391432f76c988 --yes
    """
    import re

    from minarad.secrets.purge import purge_fingerprints

    bad = [f for f in fingerprints if not re.fullmatch(r"[0-9a-f]{16}", f)]
    if bad:
        raise click.BadParameter(f"{len(bad)} not a fingerprint (16 hex characters, as "
                                 f"'minara secrets scan --history' prints them)",
                                 param_hint="FINGERPRINTS")
    if not yes:
        raise click.UsageError("a purge rewrites history and cannot be undone: add --yes")
    result = purge_fingerprints(ctx.app.store, list(fingerprints), force=force)
    emit(ctx, result.to_dict(), f"purged {len(fingerprints)} credential(s) from history "
         f"({len(result.refs_rewritten)} ref(s) rewritten, {result.objects_removed} objects "
         f"removed); files rewritten on disk: {', '.join(result.paths) or 'none'}")

"""``minara config`` (effective settings and their origin) and ``minara init``."""

from __future__ import annotations

import os

import click

from minarad.cli.options import CliContext, emit, json_option, pass_ctx


@click.command()
@json_option
@pass_ctx
def config(ctx: CliContext) -> None:
    """Print the effective settings and where each one came from.

    Order of precedence: flag > environment > config file > default.
    data_dir holds artifacts and uploads, state_dir the search index;
    dream_enabled and dream_interval_hours are read by the dream job (not
    yet built).

    Example: minara --json config
    """
    s = ctx.settings
    values = s.as_dict()
    settings = {k: {"value": v, "source": s.sources.get(k, "default")}
                for k, v in values.items() if k != "config_file"}
    data = {"config_file": str(s.config_file), "settings": settings}
    width = max(len(k) for k in settings)
    lines = [f"config file: {s.config_file}"] + [
        f"{k:<{width}}  {v['value']}  ({v['source']})" for k, v in settings.items()]
    emit(ctx, data, "\n".join(lines))


@click.command()
@click.argument("directory", required=False, metavar="[DIR]")
@click.option("--from", "from_url", metavar="URL",
              help="Join the workspace another machine keeps at this git remote.")
@click.option("--remote", "remote_name", default="origin", show_default=True,
              help="The name the remote gets (with --from).")
@json_option
@pass_ctx
def init(ctx: CliContext, directory: str | None, from_url: str | None,
         remote_name: str) -> None:
    """Create (or adopt) the workspace in DIR, seed missing files and commit them.

    DIR is the same as --workspace DIR (default: the configured workspace).
    Safe to run again: nothing that exists is overwritten. The configured
    workspace is also set up by the first command that needs it; a folder
    named with --workspace DIR is only ever created by init (or import), so
    a mistyped path is refused, not seeded. With --from URL this machine joins
    the workspace kept at that remote: the remote is added and synced once;
    a seeded file nobody changed here gives way to the remote's text (never
    the template twice), and so does a seeded BOOTSTRAP.md when onboarding
    was done there.

    Example: minara init ~/.openclaw/workspace

    Example: minara init --from git@example.org:me/memory.git
    """
    if directory is not None:
        given = ctx.flags.get("workspace")
        if given and os.path.abspath(os.path.expanduser(given)) != \
                os.path.abspath(os.path.expanduser(directory)):
            raise click.UsageError(f"DIR {directory} and --workspace {given} differ; give one")
        ctx.flags["workspace"] = directory
    seeded = ctx.app.set_up()
    store = ctx.app.store
    data: dict = {"workspace": str(store.root), "seeded": seeded}
    text = f"workspace {store.root}: " + (f"seeded {', '.join(seeded)}" if seeded
                                           else "ready, nothing to seed")
    if from_url:
        from minarad.cli.sync import render_result
        from minarad.git.remotes import add_remote, list_remotes, shown_url
        from minarad.sync import sync_remote

        known = list_remotes(store.repo)
        if known.get(remote_name) not in (None, from_url):
            raise click.UsageError(f"remote {remote_name} exists with another URL "
                                   f"({shown_url(known[remote_name])}); pick --remote NAME")
        if remote_name not in known:
            add_remote(store.repo, remote_name, from_url)
        result = sync_remote(store, ctx.settings, remote_name)
        data["sync"] = result.to_dict()
        text += "\n" + render_result(result)
    data["head"] = store.head()
    emit(ctx, data, text)

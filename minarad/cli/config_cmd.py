"""``minara config`` (effective settings and their origin) and ``minara init``."""

from __future__ import annotations

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
@click.option("--from", "from_url", metavar="URL",
              help="Join the workspace another machine keeps at this git remote.")
@click.option("--remote", "remote_name", default="origin", show_default=True,
              help="The name the remote gets (with --from).")
@json_option
@pass_ctx
def init(ctx: CliContext, from_url: str | None, remote_name: str) -> None:
    """Create (or adopt) the workspace, seed missing files and commit them.

    Safe to run again: nothing that exists is overwritten. Every other
    command does the same on first use. With --from URL this machine joins
    the workspace kept at that remote: the remote is added and synced once;
    a seeded file nobody changed here gives way to the remote's text (never
    the template twice), and so does a seeded BOOTSTRAP.md when onboarding
    was done there.

    Example: minara --workspace ~/.openclaw/workspace init

    Example: minara init --from git@example.org:me/memory.git
    """
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

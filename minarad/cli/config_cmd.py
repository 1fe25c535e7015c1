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
@json_option
@pass_ctx
def init(ctx: CliContext) -> None:
    """Create (or adopt) the workspace, seed missing files and commit them.

    Safe to run again: nothing that exists is overwritten. Every other
    command does the same on first use.

    Example: minara --workspace ~/.openclaw/workspace init
    """
    seeded = ctx.app.set_up()
    store = ctx.app.store
    emit(ctx, {"workspace": str(store.root), "seeded": seeded, "head": store.head()},
         f"workspace {store.root}: " + (f"seeded {', '.join(seeded)}" if seeded
                                         else "ready, nothing to seed"))

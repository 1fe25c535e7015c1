"""Fixtures for jobs: an app on a fresh workspace, pointed at a loopback LLM."""

from __future__ import annotations

import pytest


def make_app(ws, tmp_path, **env):
    """A :class:`Minara` for ``ws`` with ``env`` settings (state in ``tmp_path``)."""
    from minarad.app import Minara
    from minarad.config import load_settings

    base = {"MINARA_WORKSPACE_DIR": str(ws), "MINARA_STATE_DIR": str(tmp_path / "state"),
            "MINARA_CONFIG": "", "MINARA_AUTHOR": "tester", "HOME": str(tmp_path)}
    return Minara(load_settings(env={**base, **env}))


@pytest.fixture
def app(ws, tmp_path, llm):
    """An app with dreaming on, the loopback LLM, small budgets; the workspace seeded."""
    a = make_app(ws, tmp_path, **{**llm.env(), "WORKSPACE_DREAM_ENABLED": "1",
                                  "MINARA_LLM_TIMEOUT_S": "0.5",
                                  "MINARA_DREAM_MAX_ANSWER_CHARS": "400"})
    a.ensure_set_up()
    yield a
    a.close()


def journal(app, name: str, text: str) -> None:
    """Append ``text`` to journal ``memory/<name>`` through the store."""
    app.store.append(f"memory/{name}", text, author="agent", source="job:turn-end")

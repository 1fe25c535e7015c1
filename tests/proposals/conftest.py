"""Helpers for budget and proposal tests: the real ``minara`` CLI on a tmp workspace."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import MINARA


def run(env, *args, check=True, input=None):
    proc = subprocess.run([MINARA, *args], env=env, capture_output=True, text=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"minara {' '.join(args)} -> {proc.returncode}: {proc.stderr}")
    return proc


def run_json(env, *args, check=True):
    proc = run(env, "--json", *args, check=check)
    return json.loads(proc.stdout or proc.stderr), proc.returncode


@pytest.fixture
def seeded(env, ws):
    run(env, "init")
    return ws

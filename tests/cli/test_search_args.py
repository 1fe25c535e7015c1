"""Search queries are words, even when they start with '-' (exclusions)."""

from __future__ import annotations

import json


def test_unquoted_exclusion_and_options_mix(minara):
    minara("memory", "set", "wiki/a/a.md", "# Deploy\n\nDeploy with the rollback plan.\n",
           check=0)
    minara("memory", "set", "wiki/b/b.md", "# Deploy lesson\n\nDeploy on Tuesdays.\n", check=0)
    both = json.loads(minara("--json", "search", "deploy", check=0).stdout)["results"]
    assert {h["path"] for h in both} >= {"wiki/a/a.md", "wiki/b/b.md"}
    hits = json.loads(minara("--json", "search", "deploy", "-tuesdays", "-n", "5",
                             check=0).stdout)["results"]
    assert "wiki/b/b.md" not in {h["path"] for h in hits}
    assert "wiki/a/a.md" in {h["path"] for h in hits}

"""The running daemon warns once per budget state change and, when asked, proposes a compaction."""

from __future__ import annotations

import pytest

from tests.conftest import assert_repo_sound, git
from tests.daemon.conftest import wait_until

pytestmark = pytest.mark.slow

SHORT = "# Memory\n\n## Notes\n\n- note 0001 about things\n"


def test_warned_once_per_state_change_and_a_compaction_proposed_not_applied(
        daemon, daemon_env, ws, barrier, llm):
    daemon.env.update(MINARA_CONTEXT_MAX_FILE_CHARS="2000", MINARA_COMPACT_AUTO="1",
                      **llm.env())
    llm.responder = lambda _request: SHORT
    daemon.start()
    barrier()
    near = "# Memory\n\n## Notes\n\n" + "".join(f"- note {i:04d} about things\n"
                                                for i in range(70))
    assert 1700 <= len(near) <= 2000
    (ws / "MEMORY.md").write_text(near)
    barrier()
    (ws / "MEMORY.md").write_text(near + "- one more\n")
    barrier()
    warned = wait_until(lambda: "budget: MEMORY.md is near its budget" in daemon.log()
                        and daemon.log())
    assert warned.count("budget: MEMORY.md is near its budget") == 1
    branches = wait_until(lambda: git(ws, "branch", "--list", "proposals/compact/*").split(),
                          what="a compaction proposal")
    assert len(branches) == 1
    assert git(ws, "show", f"{branches[0]}:MEMORY.md") == SHORT
    assert (ws / "MEMORY.md").read_text().endswith("- one more\n")  # never applied by itself
    (ws / "MEMORY.md").write_text(SHORT)
    barrier()
    wait_until(lambda: "budget: MEMORY.md is back within its budget" in daemon.log())
    assert_repo_sound(ws)

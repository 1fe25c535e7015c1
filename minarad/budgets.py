"""Memory budgets: how close each file ``minara context`` carries is to being cut.

Every file the context may carry has a budget: the per-file limit
(``context_max_file_chars``, 12,000 characters by default), and together
the total budget (``context_max_total_chars``). A file is

- ``ok`` below 85% of its budget,
- ``near`` from 85% (it still goes into the prompt whole),
- ``over`` when the context lists it by name only (over its own limit, or
  the total was used up before its turn).

:func:`budget_report` reads the states off a built
:class:`minarad.context.Context`; :class:`BudgetWatch` remembers the last
states in the state folder so a change of state is warned about once.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

#: A file at or above this share of its budget is ``near``.
NEAR_SHARE = 0.85
STATES = ("ok", "near", "over")


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate: a token per 4 ASCII characters, one per other character.

    English prose runs about 4 characters a token in common tokenizers;
    Korean, Japanese and Chinese text about one token per character.
    """
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return -(-ascii_chars // 4) + (len(text) - ascii_chars)


def state_of(chars: int, budget: int, included: bool) -> str:
    """``over`` when listed by name only, ``near`` from 85% of ``budget``, else ``ok``."""
    if not included:
        return "over"
    if budget <= 0 or chars >= NEAR_SHARE * budget:
        return "near"
    return "ok"


@dataclasses.dataclass(frozen=True)
class BudgetLine:
    """One file's place against its budget.

    Attributes:
        path: workspace path.
        role: the file's role in the context (``memory``, ``journal``...).
        block: the context block that carries it.
        chars: its size in characters.
        tokens: :func:`estimate_tokens` of its text.
        budget: the per-file budget in characters.
        state: ``ok``, ``near`` or ``over``.
        reason: why an ``over`` file is listed by name only.
    """

    path: str
    role: str
    block: str
    chars: int
    tokens: int
    budget: int
    state: str
    reason: str | None = None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class BudgetReport:
    """Every file's line, and the total against the total budget."""

    files: tuple[BudgetLine, ...]
    total_chars: int
    total_tokens: int
    total_budget: int
    total_state: str

    def states(self) -> dict[str, str]:
        """``{path: state}``, plus ``"(total)"`` for the whole context."""
        return {**{f.path: f.state for f in self.files}, TOTAL: self.total_state}

    def warnings(self) -> list[BudgetLine]:
        """The files that are near or over their budget."""
        return [f for f in self.files if f.state != "ok"]

    def as_dict(self) -> dict:
        return {"files": [f.as_dict() for f in self.files],
                "total": {"chars": self.total_chars, "tokens": self.total_tokens,
                          "budget": self.total_budget, "state": self.total_state}}


#: The key of the whole context in :meth:`BudgetReport.states`.
TOTAL = "(total)"


def budget_report(context, max_file_chars: int, max_total_chars: int) -> BudgetReport:
    """Measure each readable file of ``context`` against its budget.

    Args:
        context: a :class:`minarad.context.Context` built with these budgets.
        max_file_chars: the per-file budget the context was built with.
        max_total_chars: the total budget it was built with.
    """
    lines = []
    total_chars = total_tokens = 0
    for block in context.blocks:
        for f in block.files:
            if not f.readable:
                continue
            tokens = estimate_tokens(f.text) if f.included else -(-f.chars // 4)
            lines.append(BudgetLine(path=f.path, role=f.role, block=block.name, chars=f.chars,
                                    tokens=tokens, budget=max_file_chars,
                                    state=state_of(f.chars, max_file_chars, f.included),
                                    reason=f.omitted))
            if f.included:
                total_chars += f.chars
                total_tokens += tokens
    used_up = any("budget is used up" in (line.reason or "") for line in lines)
    total_state = "over" if used_up else state_of(total_chars, max_total_chars, True)
    return BudgetReport(files=tuple(lines), total_chars=total_chars, total_tokens=total_tokens,
                        total_budget=max_total_chars, total_state=total_state)


def render_report(report: BudgetReport) -> str:
    """The report as aligned text lines, one per file and a total."""
    width = max([len(f.path) for f in report.files] + [len(TOTAL)])
    rows = [f"{'file':<{width}}  {'chars':>7}  {'~tokens':>7}  {'budget':>7}  state"]
    for f in report.files:
        note = f"  ({f.reason})" if f.state == "over" and f.reason else ""
        rows.append(f"{f.path:<{width}}  {f.chars:>7,}  {f.tokens:>7,}  {f.budget:>7,}  "
                    f"{f.state}{note}")
    rows.append(f"{TOTAL:<{width}}  {report.total_chars:>7,}  {report.total_tokens:>7,}  "
                f"{report.total_budget:>7,}  {report.total_state}")
    return "\n".join(rows)


def budget_state_file(state_dir: str | os.PathLike, workspace: str | os.PathLike) -> Path:
    """``<state_dir>/budgets/<short hash of the workspace path>.json``."""
    import hashlib

    absolute = os.path.realpath(os.path.abspath(os.fspath(workspace)))
    return Path(state_dir) / "budgets" / (hashlib.sha256(absolute.encode()).hexdigest()[:16]
                                          + ".json")


class BudgetWatch:
    """Remember the last states of a workspace; tell each change once.

    Args:
        path: the JSON file that keeps ``{path: state}`` between runs.
    """

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, str]:
        """The states last saved (empty when none or unreadable: all files count as new)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items() if v in STATES}

    def changes(self, report: BudgetReport) -> list[tuple[str, str, str]]:
        """``(path, old, new)`` for each state that changed since the last call; saves the new.

        A file seen for the first time counts as coming from ``ok`` (so a
        file that is already near or over is warned about once).
        """
        before = self.load()
        now = report.states()
        changed = [(path, before.get(path, "ok"), state) for path, state in now.items()
                   if before.get(path, "ok") != state]
        gone = [(path, old, "ok") for path, old in before.items()
                if path not in now and old != "ok"]
        if changed or gone or set(before) != set(now):
            self._save(now)
        return changed + gone

    def _save(self, states: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(states, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


def describe_change(path: str, old: str, new: str, line: BudgetLine | None) -> str:
    """One warning line: ``MEMORY.md is near its budget (10,400 of 12,000 characters)``."""
    size = f" ({line.chars:,} of {line.budget:,} characters)" if line else ""
    if new == "over":
        return (f"{path} is over its budget{size}: the agent's context lists it by name "
                f"only; trim or compact it (minara compact {path})")
    if new == "near":
        return f"{path} is near its budget{size}: it will soon be listed by name only"
    return f"{path} is back within its budget{size} (was {old})"

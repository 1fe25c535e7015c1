"""Three-way merge of a pulled-and-edited copy with the latest text.

Built on ``merge3`` (bzr's line-based merge). Where the writer's lines and
the latest lines clash, the latest text is kept in place and the writer's
new lines are appended at the end, so that nothing either side wrote is
lost and no conflict markers ever land in memory files.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class MergeResult:
    """The merged text and how many regions clashed (lines both sides changed)."""

    text: str
    conflicts: int


def merge_texts(base: str, latest: str, mine: str, *, in_place: bool = False) -> MergeResult:
    """Merge ``mine`` (edited from ``base``) into ``latest``.

    Where both changed the same lines, ``latest``'s stay where they were and
    ``mine``'s new lines go to the end of the text, or, with ``in_place``,
    right after ``latest``'s (both versions where the line was: a sync).

    Args:
        base: the text the writer started from.
        latest: the text now in the workspace.
        mine: the writer's edited text.
        in_place: put ``mine``'s clashing lines beside ``latest``'s, not at the end.
    """
    import merge3

    base_l, latest_l, mine_l = (t.splitlines(keepends=True) for t in (base, latest, mine))
    m = merge3.Merge3(base_l, latest_l, mine_l)
    out, appended, conflicts = [], [], 0
    for region in m.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out += base_l[region[1]:region[2]]
        elif kind in ("a", "same"):
            out += latest_l[region[1]:region[2]]
        elif kind == "b":
            out += mine_l[region[1]:region[2]]
        else:
            # merge3 annotates every region as a 3-tuple; a "conflict" has 7 items
            _, zs, ze, as_, ae, bs, be = region  # type: ignore[misc]
            conflicts += ze > zs  # both sides only adding at one place is no clash
            out += latest_l[as_:ae]
            base_region = set(base_l[zs:ze])
            theirs = [line for line in mine_l[bs:be] if line not in base_region]
            if in_place:
                if out and theirs and not out[-1].endswith("\n"):
                    out[-1] += "\n"
                out += theirs
            else:
                appended += theirs
    text = "".join(out)
    if appended:
        if text and not text.endswith("\n"):
            text += "\n"
        text += "".join(line if line.endswith("\n") else line + "\n" for line in appended)
    return MergeResult(text, conflicts)

"""How search results print: shared by ``minara search``, ``minara memory search``
and the other surfaces that show hits. Free of click on purpose.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing here
if TYPE_CHECKING:
    from collections.abc import Sequence

    from minarad.index.results import CatchUpStats, Hit

HIGHLIGHT_ON = "\x1b[1;33m"
HIGHLIGHT_OFF = "\x1b[0m"
PLAIN_MARK = "**"
#: How a hit's location shows on a terminal (bold magenta, as click styles it).
WHERE_ON = "\x1b[35m\x1b[1m"
WHERE_OFF = "\x1b[0m"


def search_json(query: str, hits: Sequence[Hit], stats: CatchUpStats | None) -> dict:
    """The ``--json`` document of a search: the query, its hits and the index's state."""
    index = None if stats is None else {"indexed_commit": stats.to_commit, "lag": stats.lag,
                                        "busy": stats.busy}
    return {"query": query, "results": [hit.to_dict() for hit in hits], "index": index}


def lag_text(lag: int | None) -> str:
    """``3 commits`` / ``1 commit`` / ``an unknown number of commits``."""
    if lag is None:
        return "an unknown number of commits"
    return f"{lag} commit{'s' if lag != 1 else ''}"


def lag_note(stats: CatchUpStats | None) -> str | None:
    """The note printed (to stderr) when another process keeps the index behind HEAD."""
    if stats is not None and stats.busy and stats.lag:
        return (f"minara: note: the index is {lag_text(stats.lag)} behind HEAD "
                f"(another process is updating it)")
    return None


def render_hit(hit: Hit, colour: bool) -> str:
    """Two lines per hit: where it is, then the snippet with its hits marked."""
    where = f"{hit.path}:{hit.line_start}-{hit.line_end}"
    heading = f"  {hit.heading}" if hit.heading else f"  [{hit.kind}] {hit.title}".rstrip()
    version = f", v{hit.version}" if hit.version is not None else ""
    head = f"{where}{heading}  ({hit.score:.4g}{version})"
    if colour:
        head = WHERE_ON + where + WHERE_OFF + head[len(where):]
        snippet = hit.snippet.render(HIGHLIGHT_ON, HIGHLIGHT_OFF)
    else:
        snippet = hit.snippet.render(PLAIN_MARK, PLAIN_MARK)
    text = f"{head}\n    {snippet}"
    if hit.explain:
        text += "\n    " + explain_text(hit.explain)
    return text


def explain_text(explain: dict) -> str:
    """One line: each voice's rank and score (``lexical #1 (3.2)``), and the page's share."""
    parts = []
    for name, value in explain.items():
        if name == "page":
            parts.append(f"page +{value['score']:.4f} ({value['sections']} sections)")
        elif name == "fusion":
            held = value["words_held"]
            parts.append(f"semantic weight {value['semantic_weight']:g}"
                         + ("" if held is None else f" (best page by words holds {held:.0%} "
                                                    "of them)"))
        elif name == "similarity":
            cosine = "none" if value["score"] is None else f"{value['score']:g}"
            title, section = value.get("title"), value.get("section")
            by_title = title is not None and section is not None and title > section
            parts.append(f"similarity {cosine} (floor {value['floor']:g})"
                         + (f" by its title, section {section:g}" if by_title else ""))
        else:
            parts.append(f"{name} #{value['rank']} ({value['score']:g})")
    return "explain: " + " · ".join(parts)


def render_hits(hits: Sequence[Hit], colour: bool) -> str:
    """The hits as text, or ``no results``."""
    if not hits:
        return "no results"
    return "\n".join(render_hit(hit, colour) for hit in hits)

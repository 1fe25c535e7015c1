"""Knowledge: facts and policies the agent proposes and people review.

Records are Markdown files with front matter under ``knowledge/<domain>/``
(:mod:`.records`); grants (:mod:`.grants`) decide which roles read which
domains and who may write policies; channel members (:mod:`.members`) who may
use a conversation's memory; the hot tier (:mod:`.hot`) turns session notes
into facts; working memory (:mod:`.notes`) is ``agents/<id>/NOTES.md``; the
catalogue (:mod:`.catalogue`) lists records and keeps the graph
(:mod:`.graph`) by change. Library API::

    from minarad.knowledge import Knowledge

    k = Knowledge(app)                      # or app.knowledge
    change = k.propose_fact(domain="infra", topic="deploys",
                            content="Deploys happen on Tuesdays.", confidence=0.8,
                            author="agent-a", role="ops", session="s1")
    k.supersede(change.record.id, content="Deploys happen on Wednesdays.", author="agent-a")
    k.list_facts(domain="infra", sort="confidence")      # -> Listing(records, count, problems)
    k.edit(fact_id, domain="ops", author="dana")        # moves the file, one commit
    k.delete(fact_id, author="dana")
    k.propose_policy(domain="infra", topic="freeze", content="...", author="agent-a",
                     role="ops")                        # needs a write grant
    k.set_active(policy_id, False, author="dana")
    k.set_grant("ops", "infra", "write", author="dana"); k.check_grant("ops", "infra")
    k.change_members("team-a", add=["agent-a"], author="dana")
    k.check_channel_access("team-a", "agent-b")         # Forbidden: access_denied
    k.remember("the CI cache is flaky", session="s1", author="agent-a")
    k.consolidate(author="agent-a")                     # LLM, or notes seen in 2+ sessions
    k.ingest_decisions(text, name="2026-11-30-standup", author="dana")
    k.record_observation("agent-a", "deploys are slow on Mondays")
    k.update_my_notes("agent-a", "Working on the release notes.", base=3)
    k.graph(domain="infra").to_json(); k.search_facts("deploy day")

Importing this package costs nothing: the names below load on first use, so
the click-free ``memory get`` can check a channel's members
(:mod:`.members`) without loading the rest.
"""

_NAMES = {"Change": "service", "Knowledge": "service", "Listing": "service",
          "Grants": "grants", "KnowledgeRecord": "records", "RecordProblem": "records"}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)

"""The learn store: lessons, corrections and errors in openboa's JSONL shape.

``LearnStore(store)`` captures (deduped), records uses as evidence, lists
and shows entries with their stats (uses, successes, the Wilson lower
bound), and promotes graduates into MEMORY.md's managed block. Pure parts:
:mod:`records`, :mod:`evidence`, :mod:`promotion`.
"""

__all__ = ["CaptureResult", "EvidenceStats", "LearnEntry", "LearnRecord", "LearnStore",
           "PromotionResult", "PromotionRule", "UseResult", "wilson_lower_bound"]

_EXPORTS = {"CaptureResult": "store", "LearnEntry": "store", "LearnStore": "store",
            "PromotionResult": "store", "UseResult": "store", "LearnRecord": "records",
            "EvidenceStats": "evidence", "wilson_lower_bound": "evidence",
            "PromotionRule": "promotion"}


def __getattr__(name):
    """Import exports on first use."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"minarad.learn.{_EXPORTS[name]}"), name)

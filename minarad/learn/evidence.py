"""Evidence of use (``learn/evidence.jsonl``): see :mod:`minarad.workspace.evidence`.

The pure parsing lives in the workspace layer, so the search index reads
the same lines the same way; this module is the learn store's name for it.
"""

from minarad.workspace.evidence import (EVIDENCE_PATH, OUTCOMES, USED, Z95,  # noqa: F401
                                        EvidenceStats, LineProblem, fold_evidence, render_use,
                                        wilson_lower_bound)

"""The git layer: everything minarad reads from or writes to a repository.

One module per git concept, used by the store, the search index and
whatever follows history (embeddings, the knowledge graph, remote sync):

- :mod:`refs` — find the repository, read HEAD and refs (without dulwich),
  lock a branch and move it by compare-and-swap.
- :mod:`objects` — blobs and commits by id; a missing object is a damaged
  repository (``repository_damaged``), never a bare ``KeyError``.
- :mod:`trees` — build a tree from its parent's, writing only what changed.
- :mod:`commits` — identities and commit objects with any number of parents.
- :mod:`diff` — the files that differ between two trees, or that a commit changed.
- :mod:`history` — the one walk from HEAD back to the commits already known.
- :mod:`index` — keep ``.git/index`` in step with a commit by splicing it.

It imports only dulwich (lazily, so reading HEAD stays cheap), the standard
library and :mod:`minarad.errors`.
"""

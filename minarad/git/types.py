"""Names for dulwich's objects in the git layer's signatures.

dulwich's own annotations (``ObjectID`` and ``Ref`` new-types, ``ShaFile``
returned where a ``Commit`` or ``Tree`` is meant) would need a cast at
almost every call, so these names say what a parameter is without them.
"""

from __future__ import annotations

from typing import Any

#: A dulwich ``Repo``.
Repo = Any
#: A dulwich object store (``repo.object_store``).
ObjectStore = Any
#: A dulwich ``Commit``.
Commit = Any

"""Open and create repositories (dulwich's ``Repo``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from minarad.errors import NotFound

if TYPE_CHECKING:
    from minarad.git.types import Repo as RepoType


def open_repo(root: str | os.PathLike[str]) -> RepoType:
    """Open the repository of the workspace ``root`` (its ``.git`` folder or file).

    Raises:
        NotFound: there is no repository (``workspace_not_found``).
    """
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        return Repo(os.fspath(root))
    except (NotGitRepository, FileNotFoundError, NotADirectoryError):
        raise NotFound(f"{root} is not a workspace repository (no .git); "
                       f"run `minara init`", code="workspace_not_found") from None


def init_repo(root: str | os.PathLike, branch: str = "main") -> None:
    """Create an empty repository in ``root`` whose HEAD names ``branch``.

    A repository another process created meanwhile is left as it is.
    """
    from dulwich.repo import Repo

    try:
        Repo.init(os.fspath(root), default_branch=branch.encode()).close()
    except FileExistsError:
        pass

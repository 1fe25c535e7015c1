"""The wiki: Markdown pages at lowercase paths, ``[[links]]`` and backlinks.

Library API (the CLI, the HTTP gateway and the MCP server call these)::

    from minarad.wiki import Wiki

    wiki = Wiki(app)                                   # a Minara (or a Store)
    wiki.put("handbook/refunds", "# Refunds\\n", author="ana", base=3)
    page = wiki.get("handbook/refunds")                # .text, .title, .version, .backlinks
    wiki.list("handbook"); wiki.tree()
    wiki.rename("handbook/refunds", "Refund rules", author="ana")
    wiki.move("handbook", "guide", fix_links=True, author="ana")   # one commit
    wiki.delete("guide/refunds", author="ana"); wiki.restore("guide/refunds", 2, author="ana")
    wiki.links("guide"); wiki.missing(); wiki.search("refund")

Every call takes ``channel=`` for a channel's pages (seen only by callers
naming that channel).
"""

from minarad.wiki.models import (Backlink, MoveResult, OutLink, Page, PageInfo,  # noqa: F401
                                 PageWrite, TreeNode)
from minarad.wiki.names import check_name, default_title, page_file, page_of_file  # noqa: F401
from minarad.wiki.wiki import Wiki  # noqa: F401

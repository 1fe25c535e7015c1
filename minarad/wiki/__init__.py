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
naming that channel). Exports load on first use, so the fast ``wiki get``
imports only the link table.
"""

_EXPORTS = {"Wiki": "wiki", "Backlink": "models", "MoveResult": "models",
            "OutLink": "models", "Page": "models", "PageInfo": "models", "PageWrite": "models",
            "TreeNode": "models", "check_name": "names", "default_title": "names",
            "page_file": "names", "page_of_file": "names"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    """Import exports on first use."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"minarad.wiki.{_EXPORTS[name]}"), name)

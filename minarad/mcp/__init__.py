"""The agent's tools over MCP (Model Context Protocol).

``minara mcp`` serves them on stdio (the harness starts it); the daemon can
serve the same tools over streamable HTTP on loopback behind a bearer token
(``mcp_http_enabled``). The layers, bottom to top:

- :mod:`minarad.mcp.library`: :class:`AgentTools`, one method per tool, thin
  over the store, the index and the context; plain dicts in and out, library
  errors raised. No MCP import, so it is tested and reused without a server.
- :mod:`minarad.mcp.changes`: which resource files a commit changed.
- :mod:`minarad.mcp.server`: the MCP server (the official SDK's ``MCPServer``):
  tools with schemas and descriptions, resources with change notifications,
  the ``session_context`` prompt.
- :mod:`minarad.mcp.http`: the daemon's streamable HTTP endpoint and its token.
"""

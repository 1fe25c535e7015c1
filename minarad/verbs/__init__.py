"""The verbs every surface offers, behind :class:`minarad.app.Minara`.

Each module holds the work of one family of verbs (search, memory,
context) as plain functions over the app, and the typed results they
return. :class:`~minarad.app.Minara` is the facade the CLI, the gateway
and MCP call; these modules import nothing heavy at module level, so a
verb costs only what it uses.
"""

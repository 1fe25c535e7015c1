"""minarad: a versioned, searchable home for an AI agent's Markdown memory."""

__version__ = "0.1.0"

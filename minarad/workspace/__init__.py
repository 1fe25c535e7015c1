"""The workspace: layout and file roles, paths, templates, seeding, import."""

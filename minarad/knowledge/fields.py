"""Record field names and the one-line rendering of a record; light (no dataclasses),
for the click-free ``minara fact list``."""

from __future__ import annotations

#: Front matter keys in the order they are written (and shown in JSON).
FACT_KEYS = ("id", "domain", "topic", "confidence", "scope", "author", "agent_role", "session",
             "created", "updated", "supersedes", "superseded_by")
POLICY_KEYS = ("id", "domain", "topic", "active", "author", "agent_role", "created", "updated",
               "supersedes", "superseded_by")
FOLDERS = {"fact": "facts", "policy": "policies"}


def record_path(kind: str, domain: str, record_id: str) -> str:
    """``knowledge/<domain>/<facts|policies>/<id>.md``."""
    return f"knowledge/{domain}/{FOLDERS[kind]}/{record_id}.md"


def record_dict(fields: dict) -> dict:
    """The JSON form of a record from its fields (``kind``, ``path``, its keys, ``content``)."""
    kind = fields["kind"]
    data = {"kind": kind, "path": record_path(kind, fields["domain"], fields["id"])}
    data.update({key: fields[key] for key in (FACT_KEYS if kind == "fact" else POLICY_KEYS)})
    data["content"] = fields["content"]
    return data


def record_line(fields: dict) -> str:
    """``<id>  [<domain> / <topic>]  <confidence|active>  <content>  (superseded by ...)``."""
    if fields["kind"] == "fact":
        extra = f"{fields['confidence']:.2f}"
    else:
        extra = "active" if fields["active"] else "inactive"
    mark = f"  (superseded by {fields['superseded_by']})" if fields["superseded_by"] else ""
    content = " ".join(fields["content"].split())
    return f"{fields['id']}  [{fields['domain']} / {fields['topic']}]  {extra}  {content}{mark}"


def count_line(count: int, shown: int) -> str:
    """``N facts`` (and how many are shown when fewer)."""
    return (f"{count} fact{'s' if count != 1 else ''}"
            + (f" (showing {shown})" if shown < count else ""))

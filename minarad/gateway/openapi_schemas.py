"""The parts of the OpenAPI document of ``/v1`` that its paths share.

Schema and response builders, the parameters several routes take, and the
component schemas (:data:`SCHEMAS`). The paths are in
:mod:`minarad.gateway.openapi` (files, search, events) and
:mod:`minarad.gateway.openapi_paths` (wiki, knowledge, learn, proposals,
artifacts).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def typed(kind: str, **extra: Any) -> dict:
    """A schema of JSON type ``kind`` with ``extra`` keywords (``items``, ``format``...)."""
    return {"type": kind, **extra}


def nullable(kind: str) -> dict:
    """A schema of JSON type ``kind`` or null."""
    return {"type": [kind, "null"]}


ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": typed("string"), "message": typed("string")}}
FILE_VERSION = {
    "type": "object", "required": ["path", "version", "exists"],
    "properties": {"path": typed("string"), "version": typed("integer"), "exists": typed("boolean"),
                   "blob_id": nullable("string"), "sha256": nullable("string"),
                   "commit": nullable("string"), "author": nullable("string"),
                   "time": nullable("string"), "source": nullable("string")}}
FILE = {"allOf": [{"$ref": "#/components/schemas/FileVersion"},
                  {"type": "object", "required": ["text", "role"],
                   "properties": {"text": typed("string"), "role": typed("string")}}]}
FILE_ROW = {"type": "object",
            "required": ["path", "role", "version", "sha256", "size", "author", "time"],
            "properties": {"path": typed("string"), "role": typed("string"),
                           "version": typed("integer"), "sha256": typed("string"),
                           "size": typed("integer"), "blob_id": typed("string"),
                           "author": nullable("string"), "time": nullable("string")}}
WRITE_RESULT = {
    "type": "object", "required": ["path", "version", "changed"],
    "properties": {"path": typed("string"), "version": typed("integer"),
                   "changed": typed("boolean"),
                   "blob_id": nullable("string"), "sha256": nullable("string"),
                   "commit": nullable("string"), "previous_version": typed("integer")}}
CONFLICT = {"allOf": [{"$ref": "#/components/schemas/Error"},
                      {"type": "object",
                       "required": ["current_version", "current_sha256"],
                       "properties": {"current_version": typed("integer"),
                                      "current_sha256": nullable("string"),
                                      "current_author": nullable("string"),
                                      "rejected_text_file": nullable("string")}}]}
HISTORY_ENTRY = {
    "type": "object",
    "required": ["path", "version", "commit", "author", "time", "source", "deleted"],
    "properties": {"path": typed("string"), "version": typed("integer"), "commit": typed("string"),
                   "author": typed("string"), "time": typed("string"), "source": typed("string"),
                   "message": typed("string"), "blob_id": nullable("string"),
                   "deleted": typed("boolean")}}
HIT = {"type": "object", "required": ["path", "snippet", "highlights", "score"],
       "properties": {"path": typed("string"), "heading": typed("string"), "title": typed("string"),
                      "kind": typed("string"), "role": typed("string"),
                      "channel": nullable("string"), "line_start": typed("integer"),
                      "line_end": typed("integer"), "score": typed("number"),
                      "version": {"type": ["integer", "string", "null"]},
                      "time": nullable("string"), "snippet": typed("string"),
                      "highlights": typed("array", items=typed("array", items=typed("integer"))),
                      "explain": typed("object")}}


def ref(name: str) -> dict:
    """A reference to the component schema ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def response(schema: dict, description: str = "OK", headers: dict | None = None) -> dict:
    """A JSON response answering ``schema``."""
    out = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        out["headers"] = headers
    return out


def errors(*codes: int) -> dict:
    """The error responses of ``codes`` (409 with the current version)."""
    text = {400: "Bad input", 401: "No or wrong credentials", 403: "Refused (path, Host, CSRF)",
            404: "Not found", 409: "Version conflict", 413: "Body too large",
            422: "A credential in a written text (secret_detected)",
            428: "If-Match required", 503: "Repository busy"}
    return {str(c): response(ref("Conflict" if c == 409 else "Error"), text[c]) for c in codes}


PATH_PARAM = {"name": "path", "in": "path", "required": True,
              "description": "A workspace path such as MEMORY.md or wiki/a/b.md",
              "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.-][A-Za-z0-9_./-]*$"}}
ETAG = {"ETag": {"description": "The sha256 of the text, quoted", "schema": typed("string")}}
IF_MATCH = {"name": "If-Match", "in": "header", "required": False,
            "description": "The sha256 (or version) you read", "schema": typed("string")}
COMMON = (400, 401, 403, 404, 413, 422, 503)
#: Every JSON body may ask for credentials to be redacted rather than refused (422).
REDACT = {"type": "boolean", "description": "Write a credential as [REDACTED:<rule>] instead "
                                            "of refusing the text with 422 secret_detected"}


def text_body(required: list[str], **props: Any) -> dict:
    """A JSON request body with ``props`` (and ``redact``), ``required`` ones required."""
    return {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": required, "properties": {**props, "redact": REDACT}}}}}



NAME_PARAM = {"name": "name", "in": "path", "required": True,
              "description": "A wiki page name: lowercase segments such as handbook/refunds",
              "schema": {"type": "string", "pattern": r"^[a-z0-9_-]+(/[a-z0-9_-]+)*$"}}
ID_PARAM = {"name": "id", "in": "path", "required": True,
            "description": "A record id: f-<ulid> (fact) or p-<ulid> (policy)",
            "schema": {"type": "string", "pattern": r"^[fp]-[0-9A-Z]{26}$"}}
CHANNEL_Q = {"name": "channel", "in": "query", "schema": typed("string")}
OBJ = typed("object")
PAGE_WRITE = {"type": "object", "required": ["name", "version", "changed"],
              "properties": {"name": typed("string"), "channel": typed("string"),
                             "title": typed("string"), "file": typed("string"),
                             "version": typed("integer"), "changed": typed("boolean"),
                             "commit": nullable("string")}}
RECORD = {"type": "object", "required": ["id", "kind", "domain", "topic", "content"],
          "properties": {"id": typed("string"), "kind": typed("string"), "domain": typed("string"),
                         "topic": typed("string"), "content": typed("string")}}
CHANGE = {"type": "object", "required": ["record", "commit"],
          "properties": {"record": ref("Record"), "commit": nullable("string")}}
LISTING = {"type": "object", "required": ["count", "records"],
           "properties": {"count": typed("integer"), "records": typed("array", items=ref("Record")),
                          "problems": typed("array")}}


#: The document's ``components.schemas``.
SCHEMAS = {"Error": ERROR, "FileVersion": FILE_VERSION, "File": FILE, "FileRow": FILE_ROW,
           "WriteResult": WRITE_RESULT, "Conflict": CONFLICT, "HistoryEntry": HISTORY_ENTRY,
           "Hit": HIT, "PageWrite": PAGE_WRITE, "Record": RECORD, "Change": CHANGE,
           "Listing": LISTING}

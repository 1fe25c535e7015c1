"""The OpenAPI 3.1 document of ``/v1`` (served at ``/v1/openapi.json``).

Written by hand beside the handlers in :mod:`minarad.gateway.api`; a test
runs schemathesis against the live server with it, so a route or a field
that drifts from this document fails there.
"""

from __future__ import annotations

from minarad import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _s(kind: str, **extra: Any) -> dict:
    return {"type": kind, **extra}


def _nullable(kind: str) -> dict:
    return {"type": [kind, "null"]}


ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": _s("string"), "message": _s("string")}}
FILE_VERSION = {
    "type": "object", "required": ["path", "version", "exists"],
    "properties": {"path": _s("string"), "version": _s("integer"), "exists": _s("boolean"),
                   "blob_id": _nullable("string"), "sha256": _nullable("string"),
                   "commit": _nullable("string"), "author": _nullable("string"),
                   "time": _nullable("string"), "source": _nullable("string")}}
FILE = {"allOf": [{"$ref": "#/components/schemas/FileVersion"},
                  {"type": "object", "required": ["text", "role"],
                   "properties": {"text": _s("string"), "role": _s("string")}}]}
FILE_ROW = {"type": "object",
            "required": ["path", "role", "version", "sha256", "size", "author", "time"],
            "properties": {"path": _s("string"), "role": _s("string"),
                           "version": _s("integer"), "sha256": _s("string"),
                           "size": _s("integer"), "blob_id": _s("string"),
                           "author": _nullable("string"), "time": _nullable("string")}}
WRITE_RESULT = {
    "type": "object", "required": ["path", "version", "changed"],
    "properties": {"path": _s("string"), "version": _s("integer"), "changed": _s("boolean"),
                   "blob_id": _nullable("string"), "sha256": _nullable("string"),
                   "commit": _nullable("string"), "previous_version": _s("integer")}}
CONFLICT = {"allOf": [{"$ref": "#/components/schemas/Error"},
                      {"type": "object",
                       "required": ["current_version", "current_sha256"],
                       "properties": {"current_version": _s("integer"),
                                      "current_sha256": _nullable("string"),
                                      "current_author": _nullable("string"),
                                      "rejected_text_file": _nullable("string")}}]}
HISTORY_ENTRY = {
    "type": "object",
    "required": ["path", "version", "commit", "author", "time", "source", "deleted"],
    "properties": {"path": _s("string"), "version": _s("integer"), "commit": _s("string"),
                   "author": _s("string"), "time": _s("string"), "source": _s("string"),
                   "message": _s("string"), "blob_id": _nullable("string"),
                   "deleted": _s("boolean")}}
HIT = {"type": "object", "required": ["path", "snippet", "highlights", "score"],
       "properties": {"path": _s("string"), "heading": _s("string"), "title": _s("string"),
                      "kind": _s("string"), "role": _s("string"),
                      "channel": _nullable("string"), "line_start": _s("integer"),
                      "line_end": _s("integer"), "score": _s("number"),
                      "version": {"type": ["integer", "string", "null"]},
                      "time": _nullable("string"), "snippet": _s("string"),
                      "highlights": _s("array", items=_s("array", items=_s("integer"))),
                      "explain": _s("object")}}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str = "OK", headers: dict | None = None) -> dict:
    out = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        out["headers"] = headers
    return out


def _errors(*codes: int) -> dict:
    text = {400: "Bad input", 401: "No or wrong credentials", 403: "Refused (path, Host, CSRF)",
            404: "Not found", 409: "Version conflict", 413: "Body too large",
            422: "A credential in a written text (secret_detected)",
            428: "If-Match required", 503: "Repository busy"}
    return {str(c): _json(_ref("Conflict" if c == 409 else "Error"), text[c]) for c in codes}


PATH_PARAM = {"name": "path", "in": "path", "required": True,
              "description": "A workspace path such as MEMORY.md or wiki/a/b.md",
              "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.-][A-Za-z0-9_./-]*$"}}
ETAG = {"ETag": {"description": "The sha256 of the text, quoted", "schema": _s("string")}}
IF_MATCH = {"name": "If-Match", "in": "header", "required": False,
            "description": "The sha256 (or version) you read", "schema": _s("string")}
COMMON = (400, 401, 403, 404, 413, 422, 503)
#: Every JSON body may ask for credentials to be redacted rather than refused (422).
REDACT = {"type": "boolean", "description": "Write a credential as [REDACTED:<rule>] instead "
                                            "of refusing the text with 422 secret_detected"}


def _text_body(required: list[str], **props: Any) -> dict:
    return {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": required, "properties": {**props, "redact": REDACT}}}}}


def _paths() -> dict:
    file_ops = {
        "get": {"summary": "Read a file (now, or ?version=V)", "operationId": "getFile",
                "parameters": [PATH_PARAM, {"name": "version", "in": "query",
                                            "schema": _s("string")}],
                "responses": {"200": _json(_ref("File"), headers=ETAG),
                              "304": {"description": "Not modified (If-None-Match)"},
                              **_errors(*COMMON)}},
        "put": {"summary": "Replace a file; a stale base is refused with 409",
                "operationId": "putFile", "parameters": [PATH_PARAM, IF_MATCH],
                "requestBody": _text_body(["text"], text=_s("string"),
                                          base=_nullable("string"), message=_nullable("string"),
                                          allow_empty=_s("boolean")),
                "responses": {"200": _json(_ref("WriteResult"), headers=ETAG),
                              **_errors(*COMMON, 409)}},
        "delete": {"summary": "Delete a file in a commit (If-Match required)",
                   "operationId": "deleteFile",
                   "parameters": [PATH_PARAM, IF_MATCH,
                                  {"name": "base", "in": "query", "schema": _s("string")}],
                   "responses": {"200": _json(_ref("WriteResult")),
                                 **_errors(*COMMON, 409, 428)}},
    }
    return {
        "/v1/workspace/files": {"get": {
            "summary": "List the workspace's files, identity files first",
            "operationId": "listFiles",
            "responses": {"200": _json({"type": "object", "required": ["files"], "properties": {
                "files": _s("array", items=_ref("FileRow"))}}), **_errors(401, 403, 503)}}},
        "/v1/workspace/files/{path}": file_ops,
        "/v1/workspace/append/{path}": {"post": {
            "summary": "Append text as new line(s); never a conflict", "operationId": "append",
            "parameters": [PATH_PARAM], "requestBody": _text_body(["text"], text=_s("string")),
            "responses": {"200": _json(_ref("WriteResult"), headers=ETAG),
                          **_errors(*COMMON)}}},
        "/v1/workspace/history/{path}": {"get": {
            "summary": "Every version of a file, newest first", "operationId": "history",
            "parameters": [PATH_PARAM],
            "responses": {"200": _json({"type": "object", "required": ["path", "versions"],
                                        "properties": {"path": _s("string"), "versions": _s(
                                            "array", items=_ref("HistoryEntry"))}}),
                          **_errors(*COMMON)}}},
        "/v1/workspace/diff/{path}": {"get": {
            "summary": "Unified diff between two versions (to: now)", "operationId": "diff",
            "parameters": [PATH_PARAM,
                           {"name": "from", "in": "query", "required": True,
                            "schema": _s("string")},
                           {"name": "to", "in": "query", "schema": _s("string")}],
            "responses": {"200": _json({"type": "object", "required": ["path", "diff"],
                                        "properties": {"path": _s("string"),
                                                       "from": _s("string"),
                                                       "to": _nullable("string"),
                                                       "diff": _s("string")}}),
                          **_errors(*COMMON)}}},
        "/v1/workspace/restore/{path}": {"post": {
            "summary": "Bring an old version back as a new version", "operationId": "restore",
            "parameters": [PATH_PARAM],
            "requestBody": _text_body(["version"], version=_s("string")),
            "responses": {"200": _json(_ref("WriteResult"), headers=ETAG),
                          **_errors(*COMMON)}}},
        "/v1/workspace/heartbeat/reset": {"post": {
            "summary": "Reset HEARTBEAT.md from its template", "operationId": "resetHeartbeat",
            "requestBody": _text_body([], base=_nullable("string")),
            "responses": {"200": _json(_ref("WriteResult"), headers=ETAG),
                          **_errors(*COMMON, 409)}}},
        "/v1/search": {"get": {
            "summary": "Search with snippets: keyword, semantic or hybrid",
            "description": "Ranked sections. `mode` keyword (words), semantic (meaning) or "
                           "hybrid (words, meaning, recency and links fused); the last two need "
                           "an embedding model, else 400 no_embedding_model; without it, "
                           "hybrid when a model "
                           "is installed and has embedded, else keyword. `mode=all|memory` is "
                           "the older spelling of `scope`. Facts and policies of knowledge "
                           "domains whose grant for the role (`role`, else the X-Minara-Role "
                           "header, else general) is none never show; while "
                           "knowledge/grants.json cannot be read none does, and `withheld` "
                           "(the invalid_grants error: path, line, message) says why.",
            "operationId": "search",
            "parameters": [
                {"name": "q", "in": "query", "required": True, "schema": _s("string")},
                {"name": "mode", "in": "query",
                 "schema": {"type": "string",
                            "enum": ["keyword", "semantic", "hybrid", "all", "memory"]}},
                {"name": "scope", "in": "query",
                 "schema": {"type": "string", "enum": ["all", "memory"]}},
                {"name": "kind", "in": "query", "schema": _s("array", items=_s("string")),
                 "style": "form", "explode": True},
                {"name": "path", "in": "query", "schema": _s("string")},
                {"name": "channel", "in": "query", "schema": _s("string")},
                {"name": "since", "in": "query", "schema": _s("string"),
                 "description": "Changed since: 2026-01-31, 7d, 12h"},
                {"name": "until", "in": "query", "schema": _s("string"),
                 "description": "Changed until: 2026-01-31, 7d, 12h"},
                {"name": "per_page", "in": "query",
                 "schema": {"type": "integer", "minimum": 0, "maximum": 1000},
                 "description": "At most this many sections of one page (default 2; 0: any)"},
                {"name": "pages", "in": "query", "schema": _s("boolean"),
                 "description": "One hit per page"},
                {"name": "explain", "in": "query", "schema": _s("boolean"),
                 "description": "Each voice's rank and score in each hit's `explain`"},
                {"name": "role", "in": "query", "schema": _s("string"),
                 "description": "Search as this agent role (default: X-Minara-Role, general)"},
                {"name": "X-Minara-Role", "in": "header", "schema": _s("string")},
                {"name": "limit", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
            "responses": {"200": _json({"type": "object", "required": ["query", "results"],
                                        "properties": {"query": _s("string"),
                                                       "scope": _s("string"),
                                                       "mode": _s("string"),
                                                       "results": _s("array", items=_ref("Hit")),
                                                       "index": _s("object"),
                                                       "withheld": _s("object")}}),
                          **_errors(400, 401, 403, 503)}}},
        "/v1/status": {"get": {
            "summary": "Daemon, index, repository and gateway status", "operationId": "status",
            "responses": {"200": _json({"type": "object",
                                        "required": ["version", "workspace", "daemon", "index"],
                                        "properties": {"version": _s("string"),
                                                       "workspace": _s("string"),
                                                       "head": _nullable("string"),
                                                       "daemon": _s("object"),
                                                       "index": _s("object"),
                                                       "semantic_search": _s("object"),
                                                       "gateway": _s("object")}}),
                          **_errors(401, 403)}}},
        "/v1/events": {"get": {
            "summary": "Server-sent events: one `commit` event per commit (paths with "
                       "versions, author, source); a `secret_held_back` event names a save "
                       "the daemon did not commit (file, line, rule, fingerprint)",
            "operationId": "events",
            "responses": {"200": {"description": "An event stream",
                                  "content": {"text/event-stream": {"schema": _s("string")}}},
                          **_errors(401, 403)}}},
    }


NAME_PARAM = {"name": "name", "in": "path", "required": True,
              "description": "A wiki page name: lowercase segments such as handbook/refunds",
              "schema": {"type": "string", "pattern": r"^[a-z0-9_-]+(/[a-z0-9_-]+)*$"}}
ID_PARAM = {"name": "id", "in": "path", "required": True,
            "description": "A record id: f-<ulid> (fact) or p-<ulid> (policy)",
            "schema": {"type": "string", "pattern": r"^[fp]-[0-9A-Z]{26}$"}}
CHANNEL_Q = {"name": "channel", "in": "query", "schema": _s("string")}
OBJ = _s("object")
PAGE_WRITE = {"type": "object", "required": ["name", "version", "changed"],
              "properties": {"name": _s("string"), "channel": _s("string"),
                             "title": _s("string"), "file": _s("string"),
                             "version": _s("integer"), "changed": _s("boolean"),
                             "commit": _nullable("string")}}
RECORD = {"type": "object", "required": ["id", "kind", "domain", "topic", "content"],
          "properties": {"id": _s("string"), "kind": _s("string"), "domain": _s("string"),
                         "topic": _s("string"), "content": _s("string")}}
CHANGE = {"type": "object", "required": ["record", "commit"],
          "properties": {"record": _ref("Record"), "commit": _nullable("string")}}
LISTING = {"type": "object", "required": ["count", "records"],
           "properties": {"count": _s("integer"), "records": _s("array", items=_ref("Record")),
                          "problems": _s("array")}}


def _wiki_paths() -> dict:
    page_ops = {
        "get": {"summary": "A page with its backlinks", "operationId": "wikiGet",
                "parameters": [NAME_PARAM, CHANNEL_Q,
                               {"name": "version", "in": "query", "schema": _s("string")}],
                "responses": {"200": _json({"type": "object",
                                            "required": ["name", "text", "backlinks"],
                                            "properties": {"name": _s("string"),
                                                           "text": _s("string"),
                                                           "backlinks": _s("array")}}),
                              **_errors(*COMMON)}},
        "put": {"summary": "Create or save a page; a stale base is 409", "operationId": "wikiPut",
                "parameters": [NAME_PARAM, IF_MATCH],
                "requestBody": _text_body(["text"], text=_s("string"),
                                          title=_nullable("string"), base=_nullable("string"),
                                          channel=_nullable("string")),
                "responses": {"200": _json(_ref("PageWrite")), **_errors(*COMMON, 409)}},
        "delete": {"summary": "Delete a page in a commit", "operationId": "wikiDelete",
                   "parameters": [NAME_PARAM, IF_MATCH, CHANNEL_Q],
                   "responses": {"200": _json(_ref("PageWrite")), **_errors(*COMMON, 409)}},
    }
    return {
        "/v1/wiki/pages": {"get": {
            "summary": "Pages (or their tree with ?tree=1)", "operationId": "wikiList",
            "parameters": [{"name": "prefix", "in": "query", "schema": _s("string")},
                           {"name": "tree", "in": "query", "schema": _s("string")}, CHANNEL_Q],
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/wiki/pages/{name}": page_ops,
        "/v1/wiki/rename/{name}": {"post": {
            "summary": "Give a page a new title", "operationId": "wikiRename",
            "parameters": [NAME_PARAM],
            "requestBody": _text_body(["title"], title=_s("string"), base=_nullable("string"),
                                      channel=_nullable("string")),
            "responses": {"200": _json(_ref("PageWrite")), **_errors(*COMMON, 409)}}},
        "/v1/wiki/move": {"post": {
            "summary": "Move a page and those under it (one commit)", "operationId": "wikiMove",
            "requestBody": _text_body(["from", "to"], **{"from": _s("string"),
                                                         "to": _s("string"),
                                                         "fix_links": _s("boolean"),
                                                         "channel": _nullable("string")}),
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/wiki/history/{name}": {"get": {
            "summary": "A page's versions, newest first", "operationId": "wikiHistory",
            "parameters": [NAME_PARAM, CHANNEL_Q],
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/wiki/search": {"get": {
            "summary": "Wiki pages with snippets", "operationId": "wikiSearch",
            "parameters": [{"name": "q", "in": "query", "required": True,
                            "schema": _s("string")}, CHANNEL_Q],
            "responses": {"200": _json({"type": "object", "required": ["results"],
                                        "properties": {"results": _s("array",
                                                                     items=_ref("Hit"))}}),
                          **_errors(*COMMON)}}},
    }


def _knowledge_paths() -> dict:
    record_ops = {
        "get": {"summary": "One fact or policy", "operationId": "recordGet",
                "parameters": [ID_PARAM],
                "responses": {"200": _json(_ref("Record")), **_errors(*COMMON)}},
        "patch": {"summary": "Edit domain, topic, content, confidence or scope",
                  "operationId": "recordEdit", "parameters": [ID_PARAM],
                  "requestBody": _text_body([], domain=_s("string"), topic=_s("string"),
                                            content=_s("string"),
                                            confidence=_s("number", minimum=0, maximum=1),
                                            scope=_s("string")),
                  "responses": {"200": _json(_ref("Change")), **_errors(*COMMON)}},
        "delete": {"summary": "Delete a record (history keeps it)",
                   "operationId": "recordDelete", "parameters": [ID_PARAM],
                   "responses": {"200": _json(_ref("Change")), **_errors(*COMMON)}},
    }
    return {
        "/v1/knowledge/facts": {"get": {
            "summary": "Facts: substring filter, scope, sort, superseded switch",
            "operationId": "facts",
            "parameters": [{"name": n, "in": "query", "schema": _s("string")}
                           for n in ("q", "domain", "scope", "superseded")]
            + [{"name": "sort", "in": "query",
                "schema": {"type": "string", "enum": ["newest", "confidence"]}}],
            "responses": {"200": _json(_ref("Listing")), **_errors(*COMMON)}}},
        "/v1/knowledge/policies": {"get": {
            "summary": "Policies grouped by domain, inactive last; count = active",
            "operationId": "policies",
            "parameters": [{"name": "domain", "in": "query", "schema": _s("string")}],
            "responses": {"200": _json(_ref("Listing")), **_errors(*COMMON)}}},
        "/v1/knowledge/records/{id}": record_ops,
        "/v1/knowledge/policies/{id}/active": {"post": {
            "summary": "Activate or deactivate a policy", "operationId": "policyActive",
            "parameters": [ID_PARAM],
            "requestBody": _text_body(["active"], active=_s("boolean")),
            "responses": {"200": _json(_ref("Change")), **_errors(*COMMON)}}},
        "/v1/knowledge/grants": {"get": {
            "summary": "Role x domain grants", "operationId": "grants",
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/knowledge/graph": {"get": {
            "summary": "The knowledge graph: nodes and edges", "operationId": "graph",
            "parameters": [{"name": "domain", "in": "query", "schema": _s("string")}],
            "responses": {"200": _json({"type": "object", "required": ["nodes", "edges"],
                                        "properties": {"nodes": _s("array"),
                                                       "edges": _s("array")}}),
                          **_errors(*COMMON)}}},
    }


def _learn_paths() -> dict:
    rid = {"name": "id", "in": "path", "required": True, "schema": _s("string")}
    return {
        "/v1/learn": {"get": {
            "summary": "Learn entries with their evidence (kind, promoted, candidates)",
            "operationId": "learnList",
            "parameters": [{"name": "kind", "in": "query",
                            "schema": {"type": "string",
                                       "enum": ["lesson", "correction", "error"]}},
                           {"name": "promoted", "in": "query",
                            "schema": {"type": "string", "enum": ["true", "false"]}},
                           {"name": "candidates", "in": "query", "schema": _s("string")}],
            "responses": {"200": _json({"type": "object", "required": ["entries"],
                                        "properties": {"entries": _s("array"),
                                                       "problems": _s("array")}}),
                          **_errors(*COMMON)}}},
        "/v1/learn/entries/{id}": {"get": {
            "summary": "One entry (a unique id prefix works)", "operationId": "learnShow",
            "parameters": [rid], "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/learn/entries/{id}/use": {"post": {
            "summary": "Record one use of an entry", "operationId": "learnUse",
            "parameters": [rid],
            "requestBody": _text_body(["outcome"], outcome={"type": "string",
                                                            "enum": ["success", "failure"]},
                                      note=_s("string"), session=_s("string")),
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/learn/promote": {"post": {
            "summary": "Preview the promotion into MEMORY.md (a dry run)",
            "operationId": "learnPromotePreview",
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/jobs": {"get": {
            "summary": "Each job's schedule, last run, result, next run and error",
            "operationId": "jobs",
            "responses": {"200": _json({"type": "object", "required": ["jobs"],
                                        "properties": {"jobs": _s("array")}}),
                          **_errors(*COMMON)}}},
    }


def _proposal_paths() -> dict:
    params = [{"name": "job", "in": "path", "required": True,
               "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}},
              {"name": "name", "in": "path", "required": True,
               "description": "YYYY-MM-DD-n", "schema": {"type": "string"}}]
    proposal = {"type": "object", "required": ["id", "branch", "commit", "paths"],
                "properties": {"id": _s("string"), "branch": _s("string"),
                               "commit": _s("string"), "paths": _s("array"),
                               "diff": _s("string")}}
    return {
        "/v1/proposals": {"get": {
            "summary": "Open proposals (job changes on git branches), each with its diff",
            "operationId": "proposals",
            "responses": {"200": _json({"type": "object", "required": ["proposals", "count"],
                                        "properties": {"proposals": _s("array"),
                                                       "count": _s("integer")}}),
                          **_errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}": {"get": {
            "summary": "One proposal and its diff", "operationId": "proposal",
            "parameters": params, "responses": {"200": _json(proposal), **_errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}/accept": {"post": {
            "summary": "Accept: one merge commit (both sides kept where the file moved on)",
            "operationId": "proposalAccept", "parameters": params,
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}/reject": {"post": {
            "summary": "Reject: the branch is deleted (its commit stays in the reflog)",
            "operationId": "proposalReject", "parameters": params,
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
    }


def _artifact_paths() -> dict:
    """``/v1/artifacts`` and ``/v1/files`` (:mod:`minarad.gateway.artifacts_api`)."""
    error = _ref("Error")
    refused = {**_errors(400, 401, 403, 404, 503),
               "409": _json(error, "Not completed (its state is named)")}
    artifact_id = {"name": "id", "in": "path", "required": True,
                   "description": "x-... (chart, spreadsheet) or r-... (report)",
                   "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]+$"}}
    key = {"name": "key", "in": "path", "required": True,
           "description": "chat/files/<userId>/<unix_ms>-<id>.<ext>",
           "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.@-][A-Za-z0-9_./@-]*$"}}
    query = [{"name": n, "in": "query", "schema": _s("string")}
             for n in ("session", "type", "state")]
    limit = {"name": "limit", "in": "query", "schema": _s("integer", minimum=1, maximum=10000)}
    stored = {"type": "object", "required": ["key", "url", "size"],
              "properties": {"key": _s("string"), "url": _s("string"), "size": _s("integer"),
                             "uploaded_ms": _s("integer"),
                             "name": _s("string", description="The original file name "
                                        "(the key's last part when none was kept)")}}
    served = {"description": "A materialized file",
              "content": {t: {"schema": _s("string")} for t in (
                  "text/html", "application/json", "text/csv", "image/png")}}
    return {
        "/v1/artifacts": {"get": {
            "summary": "Artifacts, newest first, without their data",
            "operationId": "artifacts", "parameters": [*query, limit],
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/artifacts/resolve": {"get": {
            "summary": "The completed artifact a URI (chart://, spreadsheet://, report://) names;"
                       " an unknown id is artifact_not_found with the session's closest ids",
            "operationId": "artifactResolve",
            "parameters": [{"name": "uri", "in": "query", "required": True,
                            "schema": _s("string")}, query[0]],
            "responses": {"200": _json(OBJ), **refused}}},
        "/v1/artifacts/{id}": {"get": {
            "summary": "One artifact: state, data and every state transition",
            "operationId": "artifact", "parameters": [artifact_id, query[0]],
            "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
        "/v1/artifacts/{id}/files/{name}": {"get": {
            "summary": "A materialized file: index.html, artifact.json, data.csv, chart-N.png",
            "operationId": "artifactFile",
            "parameters": [artifact_id, {"name": "name", "in": "path", "required": True,
                                         "schema": _s("string")}],
            "responses": {"200": served, **_errors(*COMMON)}}},
        "/v1/files": {
            "get": {"summary": "Uploads, oldest first", "operationId": "uploads",
                    "parameters": [{"name": "userId", "in": "query", "schema": _s("string")}],
                    "responses": {"200": _json(OBJ), **_errors(*COMMON)}},
            "post": {"summary": "Upload a file (multipart field `file`, optional `userId`); "
                                "over files_max_bytes is 413 file_too_large",
                     "operationId": "upload",
                     "requestBody": {"required": True, "content": {"multipart/form-data": {
                         "schema": {"type": "object", "required": ["file"], "properties": {
                             "file": _s("string", format="binary"),
                             "userId": _s("string")}}}}},
                     "responses": {"201": _json(stored, "Stored"), **_errors(*COMMON)}}},
        "/v1/files/{key}": {
            "get": {"summary": "Download an upload (always an attachment, never rendered, "
                               "named by its original file name); a malformed key is 400 "
                               "invalid_key, one leaving the store 403 key_outside_store",
                    "operationId": "download", "parameters": [key],
                    "responses": {"200": {"description": "The bytes", "content": {
                        "application/octet-stream": {"schema": _s("string",
                                                                  format="binary")}}},
                                  **_errors(*COMMON)}},
            "delete": {"summary": "Delete an upload (logged with who and when)",
                       "operationId": "deleteUpload", "parameters": [key],
                       "responses": {"200": _json(OBJ), **_errors(*COMMON)}}},
    }


def openapi_document(address: str = "") -> dict:
    """The OpenAPI 3.1 document of the gateway at ``address``."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "minara gateway", "version": __version__,
                 "description": "An agent's Markdown memory, versioned in git. Errors carry "
                                "the CLI's codes in `error`; a stale write is 409 "
                                "`memory_version_conflict`."},
        "servers": [{"url": address}] if address else [],
        "security": [{"bearer": []}, {"session": []}],
        "paths": {**_paths(), **_wiki_paths(), **_knowledge_paths(), **_learn_paths(),
                  **_proposal_paths(), **_artifact_paths()},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "The token `minara token` prints"},
                "session": {"type": "apiKey", "in": "cookie", "name": "minara_session",
                            "description": "Browser session from `minara ui`'s login link; "
                                           "state-changing requests also need X-CSRF-Token"}},
            "schemas": {"Error": ERROR, "FileVersion": FILE_VERSION, "File": FILE,
                        "FileRow": FILE_ROW, "WriteResult": WRITE_RESULT, "Conflict": CONFLICT,
                        "HistoryEntry": HISTORY_ENTRY, "Hit": HIT, "PageWrite": PAGE_WRITE,
                        "Record": RECORD, "Change": CHANGE, "Listing": LISTING}},
    }

"""The wiki, knowledge, learn, proposal and artifact paths of the OpenAPI document.

Each function returns its part of ``paths``; :func:`minarad.gateway.openapi.openapi_document`
puts them together.
"""

from __future__ import annotations

from minarad.gateway.openapi_schemas import (CHANNEL_Q, COMMON, ID_PARAM, IF_MATCH, NAME_PARAM,
                                             OBJ, errors, nullable, ref, response, text_body,
                                             typed)


def wiki_paths() -> dict:
    """``/v1/wiki/...``: pages, their history, search and moves."""
    page_ops = {
        "get": {"summary": "A page with its backlinks", "operationId": "wikiGet",
                "parameters": [NAME_PARAM, CHANNEL_Q,
                               {"name": "version", "in": "query", "schema": typed("string")}],
                "responses": {"200": response({"type": "object",
                                               "required": ["name", "text", "backlinks"],
                                               "properties": {"name": typed("string"),
                                                              "text": typed("string"),
                                                              "backlinks": typed("array")}}),
                              **errors(*COMMON)}},
        "put": {"summary": "Create or save a page; a stale base is 409", "operationId": "wikiPut",
                "parameters": [NAME_PARAM, IF_MATCH],
                "requestBody": text_body(["text"], text=typed("string"),
                                         title=nullable("string"), base=nullable("string"),
                                         channel=nullable("string")),
                "responses": {"200": response(ref("PageWrite")), **errors(*COMMON, 409)}},
        "delete": {"summary": "Delete a page in a commit", "operationId": "wikiDelete",
                   "parameters": [NAME_PARAM, IF_MATCH, CHANNEL_Q],
                   "responses": {"200": response(ref("PageWrite")), **errors(*COMMON, 409)}},
    }
    return {
        "/v1/wiki/pages": {"get": {
            "summary": "Pages (or their tree with ?tree=1)", "operationId": "wikiList",
            "parameters": [{"name": "prefix", "in": "query", "schema": typed("string")},
                           {"name": "tree", "in": "query", "schema": typed("string")}, CHANNEL_Q],
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/wiki/pages/{name}": page_ops,
        "/v1/wiki/rename/{name}": {"post": {
            "summary": "Give a page a new title", "operationId": "wikiRename",
            "parameters": [NAME_PARAM],
            "requestBody": text_body(["title"], title=typed("string"), base=nullable("string"),
                                     channel=nullable("string")),
            "responses": {"200": response(ref("PageWrite")), **errors(*COMMON, 409)}}},
        "/v1/wiki/move": {"post": {
            "summary": "Move a page and those under it (one commit)", "operationId": "wikiMove",
            "requestBody": text_body(["from", "to"], **{"from": typed("string"),
                                                        "to": typed("string"),
                                                        "fix_links": typed("boolean"),
                                                        "channel": nullable("string")}),
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/wiki/history/{name}": {"get": {
            "summary": "A page's versions, newest first", "operationId": "wikiHistory",
            "parameters": [NAME_PARAM, CHANNEL_Q],
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/wiki/search": {"get": {
            "summary": "Wiki pages with snippets", "operationId": "wikiSearch",
            "parameters": [{"name": "q", "in": "query", "required": True,
                            "schema": typed("string")}, CHANNEL_Q],
            "responses": {"200": response({"type": "object", "required": ["results"],
                                           "properties": {"results": typed("array",
                                                                     items=ref("Hit"))}}),
                          **errors(*COMMON)}}},
    }


def knowledge_paths() -> dict:
    """``/v1/knowledge/...``: facts, policies and grants."""
    record_ops = {
        "get": {"summary": "One fact or policy", "operationId": "recordGet",
                "parameters": [ID_PARAM],
                "responses": {"200": response(ref("Record")), **errors(*COMMON)}},
        "patch": {"summary": "Edit domain, topic, content, confidence or scope",
                  "operationId": "recordEdit", "parameters": [ID_PARAM],
                  "requestBody": text_body([], domain=typed("string"), topic=typed("string"),
                                           content=typed("string"),
                                           confidence=typed("number", minimum=0, maximum=1),
                                           scope=typed("string")),
                  "responses": {"200": response(ref("Change")), **errors(*COMMON)}},
        "delete": {"summary": "Delete a record (history keeps it)",
                   "operationId": "recordDelete", "parameters": [ID_PARAM],
                   "responses": {"200": response(ref("Change")), **errors(*COMMON)}},
    }
    return {
        "/v1/knowledge/facts": {"get": {
            "summary": "Facts: substring filter, scope, sort, superseded switch",
            "operationId": "facts",
            "parameters": [{"name": n, "in": "query", "schema": typed("string")}
                           for n in ("q", "domain", "scope", "superseded")]
            + [{"name": "sort", "in": "query",
                "schema": {"type": "string", "enum": ["newest", "confidence"]}}],
            "responses": {"200": response(ref("Listing")), **errors(*COMMON)}}},
        "/v1/knowledge/policies": {"get": {
            "summary": "Policies grouped by domain, inactive last; count = active",
            "operationId": "policies",
            "parameters": [{"name": "domain", "in": "query", "schema": typed("string")}],
            "responses": {"200": response(ref("Listing")), **errors(*COMMON)}}},
        "/v1/knowledge/records/{id}": record_ops,
        "/v1/knowledge/policies/{id}/active": {"post": {
            "summary": "Activate or deactivate a policy", "operationId": "policyActive",
            "parameters": [ID_PARAM],
            "requestBody": text_body(["active"], active=typed("boolean")),
            "responses": {"200": response(ref("Change")), **errors(*COMMON)}}},
        "/v1/knowledge/grants": {"get": {
            "summary": "Role x domain grants", "operationId": "grants",
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/knowledge/graph": {"get": {
            "summary": "The knowledge graph: nodes and edges", "operationId": "graph",
            "parameters": [{"name": "domain", "in": "query", "schema": typed("string")}],
            "responses": {"200": response({"type": "object", "required": ["nodes", "edges"],
                                           "properties": {"nodes": typed("array"),
                                                          "edges": typed("array")}}),
                          **errors(*COMMON)}}},
    }


def learn_paths() -> dict:
    """``/v1/learn/...`` (lessons, their use and promotion) and ``/v1/jobs``."""
    rid = {"name": "id", "in": "path", "required": True, "schema": typed("string")}
    return {
        "/v1/learn": {"get": {
            "summary": "Learn entries with their evidence (kind, promoted, candidates)",
            "operationId": "learnList",
            "parameters": [{"name": "kind", "in": "query",
                            "schema": {"type": "string",
                                       "enum": ["lesson", "correction", "error"]}},
                           {"name": "promoted", "in": "query",
                            "schema": {"type": "string", "enum": ["true", "false"]}},
                           {"name": "candidates", "in": "query", "schema": typed("string")}],
            "responses": {"200": response({"type": "object", "required": ["entries"],
                                           "properties": {"entries": typed("array"),
                                                          "problems": typed("array")}}),
                          **errors(*COMMON)}}},
        "/v1/learn/entries/{id}": {"get": {
            "summary": "One entry (a unique id prefix works)", "operationId": "learnShow",
            "parameters": [rid], "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/learn/entries/{id}/use": {"post": {
            "summary": "Record one use of an entry", "operationId": "learnUse",
            "parameters": [rid],
            "requestBody": text_body(["outcome"], outcome={"type": "string",
                                                           "enum": ["success", "failure"]},
                                     note=typed("string"), session=typed("string")),
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/learn/promote": {"post": {
            "summary": "Preview the promotion into MEMORY.md (a dry run)",
            "operationId": "learnPromotePreview",
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/jobs": {"get": {
            "summary": "Each job's schedule, last run, result, next run and error",
            "operationId": "jobs",
            "responses": {"200": response({"type": "object", "required": ["jobs"],
                                           "properties": {"jobs": typed("array")}}),
                          **errors(*COMMON)}}},
    }


def proposal_paths() -> dict:
    """``/v1/proposals/...``: what jobs propose, to accept or reject."""
    params = [{"name": "job", "in": "path", "required": True,
               "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}},
              {"name": "name", "in": "path", "required": True,
               "description": "YYYY-MM-DD-n", "schema": {"type": "string"}}]
    proposal = {"type": "object", "required": ["id", "branch", "commit", "paths"],
                "properties": {"id": typed("string"), "branch": typed("string"),
                               "commit": typed("string"), "paths": typed("array"),
                               "diff": typed("string")}}
    return {
        "/v1/proposals": {"get": {
            "summary": "Open proposals (job changes on git branches), each with its diff",
            "operationId": "proposals",
            "responses": {"200": response({"type": "object", "required": ["proposals", "count"],
                                           "properties": {"proposals": typed("array"),
                                                          "count": typed("integer")}}),
                          **errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}": {"get": {
            "summary": "One proposal and its diff", "operationId": "proposal",
            "parameters": params, "responses": {"200": response(proposal), **errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}/accept": {"post": {
            "summary": "Accept: one merge commit (both sides kept where the file moved on)",
            "operationId": "proposalAccept", "parameters": params,
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/proposals/{job}/{name}/reject": {"post": {
            "summary": "Reject: the branch is deleted (its commit stays in the reflog)",
            "operationId": "proposalReject", "parameters": params,
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
    }


def artifact_paths() -> dict:
    """``/v1/artifacts`` and ``/v1/files`` (:mod:`minarad.gateway.artifacts_api`)."""
    error = ref("Error")
    refused = {**errors(400, 401, 403, 404, 503),
               "409": response(error, "Not completed (its state is named)")}
    artifact_id = {"name": "id", "in": "path", "required": True,
                   "description": "x-... (chart, spreadsheet) or r-... (report)",
                   "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]+$"}}
    key = {"name": "key", "in": "path", "required": True,
           "description": "chat/files/<userId>/<unix_ms>-<id>.<ext>",
           "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.@-][A-Za-z0-9_./@-]*$"}}
    query = [{"name": n, "in": "query", "schema": typed("string")}
             for n in ("session", "type", "state")]
    limit = {"name": "limit", "in": "query", "schema": typed("integer", minimum=1, maximum=10000)}
    stored = {"type": "object", "required": ["key", "url", "size"],
              "properties": {"key": typed("string"), "url": typed("string"),
                             "size": typed("integer"),
                             "uploaded_ms": typed("integer"),
                             "name": typed("string", description="The original file name "
                                           "(the key's last part when none was kept)")}}
    served = {"description": "A materialized file",
              "content": {t: {"schema": typed("string")} for t in (
                  "text/html", "application/json", "text/csv", "image/png")}}
    return {
        "/v1/artifacts": {"get": {
            "summary": "Artifacts, newest first, without their data",
            "operationId": "artifacts", "parameters": [*query, limit],
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/artifacts/resolve": {"get": {
            "summary": "The completed artifact a URI (chart://, spreadsheet://, report://) names;"
                       " an unknown id is artifact_not_found with the session's closest ids",
            "operationId": "artifactResolve",
            "parameters": [{"name": "uri", "in": "query", "required": True,
                            "schema": typed("string")}, query[0]],
            "responses": {"200": response(OBJ), **refused}}},
        "/v1/artifacts/{id}": {"get": {
            "summary": "One artifact: state, data and every state transition",
            "operationId": "artifact", "parameters": [artifact_id, query[0]],
            "responses": {"200": response(OBJ), **errors(*COMMON)}}},
        "/v1/artifacts/{id}/files/{name}": {"get": {
            "summary": "A materialized file: index.html, artifact.json, data.csv, chart-N.png",
            "operationId": "artifactFile",
            "parameters": [artifact_id, {"name": "name", "in": "path", "required": True,
                                         "schema": typed("string")}],
            "responses": {"200": served, **errors(*COMMON)}}},
        "/v1/files": {
            "get": {"summary": "Uploads, oldest first", "operationId": "uploads",
                    "parameters": [{"name": "userId", "in": "query", "schema": typed("string")}],
                    "responses": {"200": response(OBJ), **errors(*COMMON)}},
            "post": {"summary": "Upload a file (multipart field `file`, optional `userId`); "
                                "over files_max_bytes is 413 file_too_large",
                     "operationId": "upload",
                     "requestBody": {"required": True, "content": {"multipart/form-data": {
                         "schema": {"type": "object", "required": ["file"], "properties": {
                             "file": typed("string", format="binary"),
                             "userId": typed("string")}}}}},
                     "responses": {"201": response(stored, "Stored"), **errors(*COMMON)}}},
        "/v1/files/{key}": {
            "get": {"summary": "Download an upload (always an attachment, never rendered, "
                               "named by its original file name); a malformed key is 400 "
                               "invalid_key, one leaving the store 403 key_outside_store",
                    "operationId": "download", "parameters": [key],
                    "responses": {"200": {"description": "The bytes", "content": {
                        "application/octet-stream": {"schema": typed("string",
                                                                     format="binary")}}},
                                  **errors(*COMMON)}},
            "delete": {"summary": "Delete an upload (logged with who and when)",
                       "operationId": "deleteUpload", "parameters": [key],
                       "responses": {"200": response(OBJ), **errors(*COMMON)}}},
    }


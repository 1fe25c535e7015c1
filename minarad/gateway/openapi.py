"""The OpenAPI 3.1 document of ``/v1`` (served at ``/v1/openapi.json``).

Written by hand beside the handlers in :mod:`minarad.gateway.api`; a test
runs schemathesis against the live server with it, so a route or a field
that drifts from this document fails there. The shared schemas and builders
are in :mod:`minarad.gateway.openapi_schemas`, the paths of the other
surfaces in :mod:`minarad.gateway.openapi_paths`.
"""


from __future__ import annotations

from minarad import __version__
from minarad.gateway.openapi_paths import (artifact_paths, knowledge_paths, learn_paths,
                                           proposal_paths, wiki_paths)
from minarad.gateway.openapi_schemas import (COMMON, ETAG, IF_MATCH, PATH_PARAM, SCHEMAS, errors,
                                             nullable, ref, response, text_body, typed)

def _paths() -> dict:
    file_ops = {
        "get": {"summary": "Read a file (now, or ?version=V)", "operationId": "getFile",
                "parameters": [PATH_PARAM, {"name": "version", "in": "query",
                                            "schema": typed("string")}],
                "responses": {"200": response(ref("File"), headers=ETAG),
                              "304": {"description": "Not modified (If-None-Match)"},
                              **errors(*COMMON)}},
        "put": {"summary": "Replace a file; a stale base is refused with 409",
                "operationId": "putFile", "parameters": [PATH_PARAM, IF_MATCH],
                "requestBody": text_body(["text"], text=typed("string"),
                                         base=nullable("string"), message=nullable("string"),
                                         allow_empty=typed("boolean")),
                "responses": {"200": response(ref("WriteResult"), headers=ETAG),
                              **errors(*COMMON, 409)}},
        "delete": {"summary": "Delete a file in a commit (If-Match required)",
                   "operationId": "deleteFile",
                   "parameters": [PATH_PARAM, IF_MATCH,
                                  {"name": "base", "in": "query", "schema": typed("string")}],
                   "responses": {"200": response(ref("WriteResult")),
                                 **errors(*COMMON, 409, 428)}},
    }
    return {
        "/v1/workspace/files": {"get": {
            "summary": "List the workspace's files, identity files first",
            "operationId": "listFiles",
            "responses": {"200": response({"type": "object", "required": ["files"], "properties": {
                "files": typed("array", items=ref("FileRow"))}}), **errors(401, 403, 503)}}},
        "/v1/workspace/files/{path}": file_ops,
        "/v1/workspace/append/{path}": {"post": {
            "summary": "Append text as new line(s); never a conflict", "operationId": "append",
            "parameters": [PATH_PARAM], "requestBody": text_body(["text"], text=typed("string")),
            "responses": {"200": response(ref("WriteResult"), headers=ETAG),
                          **errors(*COMMON)}}},
        "/v1/workspace/history/{path}": {"get": {
            "summary": "Every version of a file, newest first", "operationId": "history",
            "parameters": [PATH_PARAM],
            "responses": {"200": response({"type": "object", "required": ["path", "versions"],
                                           "properties": {
                                               "path": typed("string"),
                                               "versions": typed("array",
                                                                 items=ref("HistoryEntry"))}}),
                          **errors(*COMMON)}}},
        "/v1/workspace/diff/{path}": {"get": {
            "summary": "Unified diff between two versions (to: now)", "operationId": "diff",
            "parameters": [PATH_PARAM,
                           {"name": "from", "in": "query", "required": True,
                            "schema": typed("string")},
                           {"name": "to", "in": "query", "schema": typed("string")}],
            "responses": {"200": response({"type": "object", "required": ["path", "diff"],
                                           "properties": {"path": typed("string"),
                                                          "from": typed("string"),
                                                          "to": nullable("string"),
                                                          "diff": typed("string")}}),
                          **errors(*COMMON)}}},
        "/v1/workspace/restore/{path}": {"post": {
            "summary": "Bring an old version back as a new version", "operationId": "restore",
            "parameters": [PATH_PARAM],
            "requestBody": text_body(["version"], version=typed("string")),
            "responses": {"200": response(ref("WriteResult"), headers=ETAG),
                          **errors(*COMMON)}}},
        "/v1/workspace/heartbeat/reset": {"post": {
            "summary": "Reset HEARTBEAT.md from its template", "operationId": "resetHeartbeat",
            "requestBody": text_body([], base=nullable("string")),
            "responses": {"200": response(ref("WriteResult"), headers=ETAG),
                          **errors(*COMMON, 409)}}},
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
                {"name": "q", "in": "query", "required": True, "schema": typed("string")},
                {"name": "mode", "in": "query",
                 "schema": {"type": "string",
                            "enum": ["keyword", "semantic", "hybrid", "all", "memory"]}},
                {"name": "scope", "in": "query",
                 "schema": {"type": "string", "enum": ["all", "memory"]}},
                {"name": "kind", "in": "query", "schema": typed("array", items=typed("string")),
                 "style": "form", "explode": True},
                {"name": "path", "in": "query", "schema": typed("string")},
                {"name": "channel", "in": "query", "schema": typed("string")},
                {"name": "since", "in": "query", "schema": typed("string"),
                 "description": "Changed since: 2026-01-31, 7d, 12h"},
                {"name": "until", "in": "query", "schema": typed("string"),
                 "description": "Changed until: 2026-01-31, 7d, 12h"},
                {"name": "per_page", "in": "query",
                 "schema": {"type": "integer", "minimum": 0, "maximum": 1000},
                 "description": "At most this many sections of one page (default 2; 0: any)"},
                {"name": "pages", "in": "query", "schema": typed("boolean"),
                 "description": "One hit per page"},
                {"name": "explain", "in": "query", "schema": typed("boolean"),
                 "description": "Each voice's rank and score in each hit's `explain`"},
                {"name": "role", "in": "query", "schema": typed("string"),
                 "description": "Search as this agent role (default: X-Minara-Role, general)"},
                {"name": "X-Minara-Role", "in": "header", "schema": typed("string")},
                {"name": "limit", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
            "responses": {"200": response({"type": "object", "required": ["query", "results"],
                                           "properties": {
                                               "query": typed("string"),
                                               "scope": typed("string"),
                                               "mode": typed("string"),
                                               "results": typed("array", items=ref("Hit")),
                                               "index": typed("object"),
                                               "withheld": typed("object")}}),
                          **errors(400, 401, 403, 503)}}},
        "/v1/status": {"get": {
            "summary": "Daemon, index, repository and gateway status", "operationId": "status",
            "responses": {"200": response({"type": "object",
                                           "required": ["version", "workspace", "daemon", "index"],
                                           "properties": {"version": typed("string"),
                                                          "workspace": typed("string"),
                                                          "head": nullable("string"),
                                                          "daemon": typed("object"),
                                                          "index": typed("object"),
                                                          "semantic_search": typed("object"),
                                                          "gateway": typed("object")}}),
                          **errors(401, 403)}}},
        "/v1/events": {"get": {
            "summary": "Server-sent events: one `commit` event per commit (paths with "
                       "versions, author, source); a `secret_held_back` event names a save "
                       "the daemon did not commit (file, line, rule, fingerprint)",
            "operationId": "events",
            "responses": {"200": {"description": "An event stream",
                                  "content": {"text/event-stream": {"schema": typed("string")}}},
                          **errors(401, 403)}}},
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
        "paths": {**_paths(), **wiki_paths(), **knowledge_paths(), **learn_paths(),
                  **proposal_paths(), **artifact_paths()},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "The token `minara token` prints"},
                "session": {"type": "apiKey", "in": "cookie", "name": "minara_session",
                            "description": "Browser session from `minara ui`'s login link; "
                                           "state-changing requests also need X-CSRF-Token"}},
            "schemas": SCHEMAS},
    }

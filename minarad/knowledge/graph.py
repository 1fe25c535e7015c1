"""The knowledge graph, read from the catalogue (kept by change, not rebuilt).

Nodes: domains, topics, facts, policies and the wiki pages records link
to. Edges: ``has_topic`` (domain -> topic), ``has`` (topic -> record),
``supersedes`` (new record -> old), ``links`` (record -> page or record).
"""

from __future__ import annotations

import dataclasses
import json


@dataclasses.dataclass
class Graph:
    """Nodes (``id``, ``kind``, ``label``, extra fields) and edges (``source``, ``target``,
    ``kind``)."""

    nodes: list[dict]
    edges: list[dict]

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"nodes": self.nodes, "edges": self.edges}

    def to_json(self) -> str:
        """The graph as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    def to_dot(self) -> str:
        """The graph in Graphviz dot."""
        shapes = {"domain": "folder", "topic": "ellipse", "fact": "note", "policy": "box",
                  "page": "component"}
        lines = ["digraph knowledge {", "  rankdir=LR;"]
        for node in self.nodes:
            style = ', style="dashed"' if node.get("superseded") else ""
            lines.append(f"  {_quote(node['id'])} [label={_quote(node['label'])}, "
                         f"shape={shapes.get(node['kind'], 'ellipse')}{style}];")
        for edge in self.edges:
            lines.append(f"  {_quote(edge['source'])} -> {_quote(edge['target'])} "
                         f"[label={_quote(edge['kind'])}];")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _record_node(record) -> dict:
    label = record.topic if len(record.content) > 60 else record.content
    node = {"id": f"{record.kind}:{record.id}", "kind": record.kind, "label": label[:80],
            "domain": record.domain, "topic": record.topic, "path": record.path,
            "superseded": record.superseded}
    if record.kind == "fact":
        node["confidence"] = record.confidence
    else:
        node["active"] = record.active
    return node


def build_graph(catalogue, *, domain: str | None = None, hidden=frozenset()) -> Graph:
    """The graph of ``domain`` (every readable domain when None)."""
    records = [r for kind in ("fact", "policy")
               for r in catalogue.records(kind, domain=domain, superseded=True, hidden=hidden,
                                          order="domain" if kind == "policy" else "newest")]
    nodes: dict[str, dict] = {}
    edges: list[dict] = []
    for record in records:
        d, t = f"domain:{record.domain}", f"topic:{record.domain}/{record.topic}"
        if d not in nodes:
            nodes[d] = {"id": d, "kind": "domain", "label": record.domain}
        if t not in nodes:
            nodes[t] = {"id": t, "kind": "topic", "label": record.topic,
                        "domain": record.domain}
            edges.append({"source": d, "target": t, "kind": "has_topic"})
        node = _record_node(record)
        nodes[node["id"]] = node
        edges.append({"source": t, "target": node["id"], "kind": "has"})
    by_path = {r.path: r for r in records}
    linked_ids = {target for _p, kind, target in catalogue.links(list(by_path))
                  if kind == "record"}
    others = catalogue.paths_of(sorted(linked_ids | {r.supersedes for r in records
                                                     if r.supersedes}))
    known = {r.id: r for r in records}
    for record in records:
        if record.supersedes:
            _edge_to_record(nodes, edges, record, record.supersedes, "supersedes", known,
                            others, hidden)
    for path, kind, target in catalogue.links(list(by_path)):
        record = by_path[path]
        if kind == "record":
            _edge_to_record(nodes, edges, record, target, "links", known, others, hidden)
        else:
            page = f"page:{target}"
            nodes.setdefault(page, {"id": page, "kind": "page", "label": target,
                                    "path": target})
            edges.append({"source": f"{record.kind}:{record.id}", "target": page,
                          "kind": "links"})
    return Graph(list(nodes.values()), edges)


def _edge_to_record(nodes, edges, record, target_id, kind, known, others, hidden) -> None:
    target = known.get(target_id) or others.get(target_id)
    if target is None or target.domain in hidden:
        return  # deleted, or not for this reader
    node = _record_node(target)
    nodes.setdefault(node["id"], node)
    edges.append({"source": f"{record.kind}:{record.id}", "target": node["id"], "kind": kind})

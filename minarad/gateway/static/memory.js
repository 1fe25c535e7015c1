// minara memory review: edit/delete/(de)activate records, and the knowledge graph canvas.
"use strict";

(function () {
  const status = document.getElementById("memory-status");
  const dialog = document.getElementById("record-edit");
  const form = document.getElementById("edit-form");
  const slider = document.getElementById("edit-confidence");
  const shown = document.getElementById("confidence-value");
  let editing = null;

  const call = window.minaraCall;

  function showConfidence() { shown.textContent = Number(slider.value).toFixed(2); }
  slider.addEventListener("input", showConfidence);

  // The one edit dialog: domain, topic, content, and (facts) confidence in 5% steps.
  function openEditor(record) {
    editing = record;
    form.elements.domain.value = record.domain;
    form.elements.topic.value = record.topic;
    form.elements.content.value = record.content;
    const fact = record.kind === "fact";
    document.getElementById("confidence-row").hidden = !fact;
    if (fact) { slider.value = record.confidence || "0.5"; showConfidence(); }
    document.getElementById("edit-title").textContent = "Edit " + record.kind + " " + record.id;
    document.getElementById("edit-status").textContent = "";
    dialog.showModal();
    form.elements.topic.focus();
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = { domain: form.elements.domain.value.trim(),
                   topic: form.elements.topic.value.trim(),
                   content: form.elements.content.value };
    if (editing.kind === "fact") data.confidence = Number(slider.value);
    const r = await call("PATCH", "/v1/knowledge/records/" + encodeURIComponent(editing.id), data);
    if (r.ok) { dialog.close(); window.location.reload(); }
    else document.getElementById("edit-status").textContent =
      "Not saved: " + (r.json ? r.json.message : r.status);
  });
  document.getElementById("edit-cancel").addEventListener("click", () => dialog.close());

  function recordOf(li) {
    return { id: li.dataset.id, kind: li.dataset.kind, domain: li.dataset.domain,
             topic: li.dataset.topic, content: li.dataset.content,
             confidence: li.dataset.confidence };
  }

  async function remove(record) {
    if (!window.confirm("Delete " + record.kind + " \u201c" + record.topic +
                        "\u201d? History keeps it.")) return;
    const r = await call("DELETE", "/v1/knowledge/records/" + encodeURIComponent(record.id));
    if (r.ok) window.location.reload();
    else status.textContent = "Not deleted: " + (r.json ? r.json.message : r.status);
  }

  document.querySelectorAll("li.record").forEach((li) => {
    li.querySelector("button.edit")?.addEventListener("click", () => openEditor(recordOf(li)));
    li.querySelector("button.delete")?.addEventListener("click", () => remove(recordOf(li)));
    li.querySelector("button.toggle")?.addEventListener("click", async () => {
      const active = li.dataset.active !== "True";
      const r = await call("POST", "/v1/knowledge/policies/" + encodeURIComponent(li.dataset.id) +
                           "/active", { active });
      if (r.ok) window.location.reload();
      else status.textContent = "Not changed: " + (r.json ? r.json.message : r.status);
    });
  });

  if (document.body.dataset.tab === "graph") graph();

  // -- the graph: a small force layout on a canvas; pan, zoom, drag, tap -------------------
  function graph() {
    const canvas = document.getElementById("graph");
    const sheet = document.getElementById("sheet");
    const pick = document.getElementById("node-pick");
    const ctx = canvas.getContext("2d");
    const colours = { domain: "#2856b6", topic: "#7a8aa8", fact: "#1f8a4c", policy: "#b5651d",
                      page: "#6b3fa0" };
    let nodes = [], edges = [], byId = {};
    let scale = 1, ox = 0, oy = 0, drag = null, moved = false;
    const LABEL_PX = 13;
    let minScale = 0.2;

    function size() {
      const r = canvas.getBoundingClientRect();
      canvas.width = Math.max(r.width, 100) * devicePixelRatio;
      canvas.height = Math.max(r.height, 100) * devicePixelRatio;
    }

    function draw() {
      ctx.setTransform(devicePixelRatio * scale, 0, 0, devicePixelRatio * scale,
                       devicePixelRatio * ox, devicePixelRatio * oy);
      ctx.clearRect(-ox / scale, -oy / scale, canvas.width / scale, canvas.height / scale);
      // edges, nodes and labels in screen pixels: as legible at any zoom as the page's text
      ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
      ctx.strokeStyle = "#aab2c2"; ctx.lineWidth = 1.2;
      edges.forEach((e) => {
        const a = byId[e.source], b = byId[e.target];
        if (!a || !b) return;
        ctx.beginPath(); ctx.moveTo(ox + a.x * scale, oy + a.y * scale);
        ctx.lineTo(ox + b.x * scale, oy + b.y * scale); ctx.stroke();
      });
      nodes.forEach((n) => {
        ctx.globalAlpha = n.superseded || n.active === false ? 0.45 : 1;
        ctx.fillStyle = colours[n.kind] || "#555";
        ctx.beginPath(); ctx.arc(ox + n.x * scale, oy + n.y * scale, radius(n), 0, Math.PI * 2);
        ctx.fill();
      });
      ctx.font = LABEL_PX + "px system-ui, sans-serif";
      ctx.lineWidth = 3; ctx.strokeStyle = "rgba(255,255,255,0.85)"; ctx.fillStyle = "#1d2330";
      nodes.forEach((n) => {
        ctx.globalAlpha = n.superseded || n.active === false ? 0.6 : 1;
        const x = ox + n.x * scale + radius(n) + 4, y = oy + n.y * scale + LABEL_PX / 3;
        const text = String(n.label).slice(0, 28);
        ctx.strokeText(text, x, y); ctx.fillText(text, x, y);
      });
      ctx.globalAlpha = 1;
      canvas.dataset.labelPx = String(LABEL_PX);
    }

    function radius(n) { return n.kind === "domain" ? 9 : 6; }

    function centre(node) {  // the chosen node in the middle of the view
      const r = canvas.getBoundingClientRect();
      ox = r.width / 2 - node.x * scale;
      oy = r.height / 2 - node.y * scale;
      draw();
    }

    function layout(steps) {
      for (let s = 0; s < steps; s++) {
        for (const a of nodes) {
          for (const b of nodes) {
            if (a === b) continue;
            let dx = a.x - b.x, dy = a.y - b.y;
            const d2 = Math.max(dx * dx + dy * dy, 25);
            a.vx += (dx / d2) * 400; a.vy += (dy / d2) * 400;
          }
        }
        edges.forEach((e) => {
          const a = byId[e.source], b = byId[e.target];
          if (!a || !b) return;
          const dx = b.x - a.x, dy = b.y - a.y;
          a.vx += dx * 0.01; a.vy += dy * 0.01; b.vx -= dx * 0.01; b.vy -= dy * 0.01;
        });
        nodes.forEach((n) => {
          if (n === drag?.node) return;
          n.x += n.vx * 0.5; n.y += n.vy * 0.5; n.vx *= 0.6; n.vy *= 0.6;
        });
      }
    }

    function fit() {  // the whole graph in view
      if (!nodes.length) return;
      const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio;
      const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
      const x0 = Math.min(...xs), x1 = Math.max(...xs) + 1;
      const y0 = Math.min(...ys), y1 = Math.max(...ys) + 1;
      const room = Math.min(160, w / 4);  // screen pixels kept for the labels on the right
      scale = Math.min((w - room - 40) / (x1 - x0), (h - 40) / (y1 - y0), 2);
      minScale = Math.min(0.2, scale);
      ox = (w - room - (x1 - x0) * scale) / 2 - x0 * scale;
      oy = (h - (y1 - y0) * scale) / 2 - y0 * scale;
      canvas.dataset.scale = scale.toFixed(3);
    }

    function at(event) {
      const r = canvas.getBoundingClientRect();
      const x = (event.clientX - r.left - ox) / scale, y = (event.clientY - r.top - oy) / scale;
      const near = (n) => ((n.x - x) * scale) ** 2 + ((n.y - y) * scale) ** 2 < 144;
      return { x, y, node: nodes.find(near) };
    }

    function open(node) {
      const fields = ["kind", "label", "domain", "topic", "confidence", "active", "superseded",
                      "path"];
      sheet.replaceChildren();
      const h = document.createElement("h2");
      h.textContent = node.label;
      sheet.append(h);
      const dl = document.createElement("dl");
      const labels = { kind: "Kind", label: "Name", domain: "Domain", topic: "Topic",
                       confidence: "Confidence", active: "Active", superseded: "Superseded",
                       path: "File" };
      fields.filter((f) => node[f] !== undefined && node[f] !== null && node[f] !== "")
        .forEach((f) => {
        const dt = document.createElement("dt"); dt.textContent = labels[f];
        const dd = document.createElement("dd");
        dd.textContent = node[f] === true ? "yes" : node[f] === false ? "no" : String(node[f]);
        dl.append(dt, dd);
      });
      sheet.append(dl);
      if (node.kind === "fact" || node.kind === "policy") {
        const button = document.createElement("button");
        button.type = "button"; button.textContent = "Edit"; button.id = "sheet-edit";
        button.addEventListener("click", async () => {
          const id = node.id.split(":")[1];
          const r = await call("GET", "/v1/knowledge/records/" + encodeURIComponent(id));
          if (r.ok) openEditor(r.json);
        });
        sheet.append(button);
      }
      sheet.hidden = false;
      sheet.dataset.node = node.id;
    }

    canvas.addEventListener("pointerdown", (e) => {
      const hit = at(e);
      drag = { node: hit.node, x: e.clientX, y: e.clientY, ox, oy };
      moved = false;
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
      if (drag.node) { const p = at(e); drag.node.x = p.x; drag.node.y = p.y; }
      else { ox = drag.ox + dx; oy = drag.oy + dy; }
      draw();
    });
    canvas.addEventListener("pointerup", () => {
      if (drag && !moved) {
        if (drag.node) open(drag.node);
        else { sheet.hidden = true; delete sheet.dataset.node; }  // a tap beside: close
      }
      drag = null;
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15);
    }, { passive: false });
    function zoom(f) { scale = Math.min(Math.max(scale * f, minScale), 5); draw(); canvas.dataset.scale = scale.toFixed(3); }
    document.getElementById("zoom-in").addEventListener("click", () => zoom(1.25));
    document.getElementById("zoom-out").addEventListener("click", () => zoom(0.8));
    pick.addEventListener("change", () => {
      const node = byId[pick.value];
      if (node) { centre(node); open(node); }
    });

    // acting as a role: the domains it may not read are left out, as for its agent
    const hidden = new Set((document.body.dataset.hidden || "").split(",").filter(Boolean));
    const seen = (n) => !hidden.has(n.domain) && !(n.kind === "domain" && hidden.has(n.label));

    async function load(first) {
      const r = await call("GET", "/v1/knowledge/graph");
      if (!r.ok) { status.textContent = "Could not load the graph."; return; }
      if (first) size();
      const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio;
      let shown = r.json.nodes.filter(seen);
      const kept = new Set(shown.map((n) => n.id));
      edges = r.json.edges.filter((e) => kept.has(e.source) && kept.has(e.target));
      const linked = new Set(edges.flatMap((e) => [e.source, e.target]));
      shown = shown.filter((n) => n.kind !== "page" || linked.has(n.id));
      const before = byId;  // a node already drawn keeps its place
      nodes = shown.map((n, i) => before[n.id] ? { ...n, x: before[n.id].x, y: before[n.id].y,
                                                   vx: 0, vy: 0 }
        : { ...n, x: (first ? w / 2 : (w / 2 - ox) / scale) + Math.cos(i) * (40 + i * 6),
            y: (first ? h / 2 : (h / 2 - oy) / scale) + Math.sin(i) * (40 + i * 6), vx: 0, vy: 0 });
      byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
      pick.replaceChildren(pick.options[0]);
      nodes.forEach((n) => {
        const o = document.createElement("option");
        o.value = n.id; o.textContent = n.kind + ": " + n.label;
        pick.append(o);
      });
      layout(first ? 150 : 40);
      if (first) fit();
      draw();
      if (sheet.dataset.node && !byId[sheet.dataset.node]) sheet.hidden = true;
      canvas.dataset.nodes = String(nodes.length);
    }

    load(true);
    // new commits under knowledge/ (another agent, the CLI, another tab) redraw the graph
    document.addEventListener("minara:commit", (e) => {
      if (e.detail.paths.some((p) => p.path.startsWith("knowledge/"))) load(false);
    });
    window.addEventListener("resize", () => { size(); draw(); });
  }
})();

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

    function size() {
      const r = canvas.getBoundingClientRect();
      canvas.width = Math.max(r.width, 100) * devicePixelRatio;
      canvas.height = Math.max(r.height, 100) * devicePixelRatio;
    }

    function draw() {
      ctx.setTransform(devicePixelRatio * scale, 0, 0, devicePixelRatio * scale,
                       devicePixelRatio * ox, devicePixelRatio * oy);
      ctx.clearRect(-ox / scale, -oy / scale, canvas.width / scale, canvas.height / scale);
      ctx.strokeStyle = "#c4cad6";
      edges.forEach((e) => {
        const a = byId[e.source], b = byId[e.target];
        if (!a || !b) return;
        ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
      });
      nodes.forEach((n) => {
        ctx.globalAlpha = n.superseded || n.active === false ? 0.45 : 1;
        ctx.fillStyle = colours[n.kind] || "#555";
        ctx.beginPath(); ctx.arc(n.x, n.y, n.kind === "domain" ? 10 : 7, 0, Math.PI * 2);
        ctx.fill();
        ctx.fillStyle = "#1d2330"; ctx.font = "11px system-ui, sans-serif";
        ctx.fillText(String(n.label).slice(0, 28), n.x + 10, n.y + 4);
      });
      ctx.globalAlpha = 1;
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
      const x0 = Math.min(...xs) - 30, x1 = Math.max(...xs) + 170;
      const y0 = Math.min(...ys) - 30, y1 = Math.max(...ys) + 30;
      scale = Math.min(w / (x1 - x0), h / (y1 - y0), 2);
      ox = (w - (x1 - x0) * scale) / 2 - x0 * scale;
      oy = (h - (y1 - y0) * scale) / 2 - y0 * scale;
      canvas.dataset.scale = scale.toFixed(3);
    }

    function at(event) {
      const r = canvas.getBoundingClientRect();
      const x = (event.clientX - r.left - ox) / scale, y = (event.clientY - r.top - oy) / scale;
      return { x, y, node: nodes.find((n) => (n.x - x) ** 2 + (n.y - y) ** 2 < 144) };
    }

    function open(node) {
      const fields = ["kind", "label", "domain", "topic", "confidence", "active", "superseded",
                      "path"];
      sheet.replaceChildren();
      const h = document.createElement("h2");
      h.textContent = node.label;
      sheet.append(h);
      const dl = document.createElement("dl");
      fields.filter((f) => node[f] !== undefined).forEach((f) => {
        const dt = document.createElement("dt"); dt.textContent = f;
        const dd = document.createElement("dd"); dd.textContent = String(node[f]);
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
      if (drag && drag.node && !moved) open(drag.node);
      drag = null;
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15);
    }, { passive: false });
    function zoom(f) { scale = Math.min(Math.max(scale * f, 0.2), 5); draw(); canvas.dataset.scale = scale.toFixed(3); }
    document.getElementById("zoom-in").addEventListener("click", () => zoom(1.25));
    document.getElementById("zoom-out").addEventListener("click", () => zoom(0.8));
    pick.addEventListener("change", () => { if (byId[pick.value]) open(byId[pick.value]); });

    call("GET", "/v1/knowledge/graph").then((r) => {
      if (!r.ok) { status.textContent = "Could not load the graph."; return; }
      size();
      const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio;
      nodes = r.json.nodes.map((n, i) => ({ ...n, x: w / 2 + Math.cos(i) * (40 + i * 6),
                                             y: h / 2 + Math.sin(i) * (40 + i * 6), vx: 0, vy: 0 }));
      edges = r.json.edges;
      byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
      nodes.forEach((n) => {
        const o = document.createElement("option");
        o.value = n.id; o.textContent = n.kind + ": " + n.label;
        pick.append(o);
      });
      layout(150);
      fit();
      draw();
      canvas.dataset.nodes = String(nodes.length);
    });
    window.addEventListener("resize", () => { size(); draw(); });
  }
})();

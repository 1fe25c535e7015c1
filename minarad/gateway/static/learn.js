// minara learn store page: record a use, preview the promotion.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const status = document.getElementById("learn-status");

  async function post(url, data) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin",
                                 headers: { "X-CSRF-Token": csrf, "Content-Type": "application/json" },
                                 body: JSON.stringify(data) });
    let json = null;
    try { json = await r.json(); } catch (e) { json = null; }
    return { ok: r.ok, status: r.status, json };
  }

  document.querySelectorAll("li.record").forEach((li) => {
    li.querySelectorAll("button.use").forEach((button) => {
      button.addEventListener("click", async () => {
        const r = await post("/v1/learn/entries/" + encodeURIComponent(li.dataset.id) + "/use",
                             { outcome: button.dataset.outcome });
        if (r.ok) {
          li.querySelector(".uses").textContent = String(r.json.stats.uses);
          status.textContent = "Recorded: " + (button.dataset.outcome === "success" ? "worked" : "did not work") + ".";
        } else {
          status.textContent = "Not recorded: " + (r.json ? r.json.message : r.status);
        }
      });
    });
  });

  document.getElementById("promote-preview").addEventListener("click", async () => {
    const r = await post("/v1/learn/promote", {});
    const out = document.getElementById("promotion");
    if (!r.ok) { status.textContent = "No preview: " + (r.json ? r.json.message : r.status); return; }
    out.textContent = "Would add: " + (r.json.added.join(", ") || "nothing") +
      "\nWould remove: " + (r.json.removed.join(", ") || "nothing") +
      "\nMEMORY.md block: " + r.json.block_state + (r.json.changed ? " (would change)" : " (no change)");
    out.hidden = false;
  });
})();

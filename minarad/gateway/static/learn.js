// minara learn store page: record a use, preview the promotion.
"use strict";

(function () {
  const status = document.getElementById("learn-status");

  const post = (url, data) => window.minaraCall("POST", url, data);

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

// minara proposals page: accept or reject a job's proposal.
"use strict";

(function () {
  const status = document.getElementById("proposal-status");
  const count = document.getElementById("proposal-count");

  const post = (url) => window.minaraCall("POST", url, {});

  document.querySelectorAll("li.proposal").forEach((li) => {
    const id = li.dataset.id;
    const url = "/v1/proposals/" + id.split("/").map(encodeURIComponent).join("/");
    li.querySelectorAll("button").forEach((button) => {
      button.addEventListener("click", async () => {
        const verb = button.classList.contains("accept") ? "accept" : "reject";
        if (verb === "reject" && !window.confirm("Reject " + id + "?")) { return; }
        const r = await post(url + "/" + verb);
        if (r.ok) {
          li.remove();
          count.textContent = String(Math.max(0, Number(count.textContent) - 1));
          status.textContent = (verb === "accept" ? "Accepted " : "Rejected ") + id + ".";
        } else {
          status.textContent = "Not done: " + (r.json ? r.json.message : r.status);
        }
      });
    });
  });
})();

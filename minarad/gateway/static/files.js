// minara uploads page: upload with a progress bar, delete after a confirmation.
"use strict";

(function () {
  const form = document.getElementById("upload-form");
  const input = document.getElementById("upload-file");
  const bar = document.getElementById("upload-progress");
  const status = document.getElementById("upload-status");
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const file = input.files[0];
    if (!file) return;
    const data = new FormData();
    data.append("file", file);
    const xhr = new XMLHttpRequest();  // fetch reports no upload progress
    xhr.open("POST", "/v1/files");
    xhr.setRequestHeader("X-CSRF-Token", csrf);
    xhr.upload.addEventListener("progress", (p) => {
      if (p.lengthComputable) bar.value = Math.round((p.loaded / p.total) * 100);
    });
    xhr.addEventListener("load", () => {
      if (xhr.status === 201) {
        bar.value = 100;
        status.textContent = "Uploaded " + file.name + ".";
        window.location.reload();
        return;
      }
      let message = "error " + xhr.status;
      try { message = JSON.parse(xhr.responseText).message; } catch (err) { /* not JSON */ }
      status.textContent = "Not uploaded: " + message;
      bar.hidden = true;
    });
    xhr.addEventListener("error", () => { status.textContent = "Not uploaded: no connection."; });
    bar.hidden = false;
    bar.value = 0;
    status.textContent = "Uploading " + file.name + "…";
    xhr.send(data);
  });

  document.querySelectorAll("button.delete[data-key]").forEach((button) => {
    button.addEventListener("click", async () => {
      const key = button.dataset.key;
      const name = button.dataset.name || key.split("/").pop();
      if (!window.confirm("Delete " + name + "? This cannot be undone.")) return;
      const url = "/v1/files/" + key.split("/").map(encodeURIComponent).join("/");
      const r = await window.minaraCall("DELETE", url);
      if (r.ok) button.closest("tr").remove();
      status.textContent = r.ok ? "Deleted " + name + "."
                                : "Not deleted: " + (r.json ? r.json.message : r.status);
    });
  });
})();

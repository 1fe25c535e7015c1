// minara web UI: saves through the /v1 API, shows the 409 dialog, follows commits live.
"use strict";

// One JSON request with the page's CSRF token, for every page's script:
// resolves to { ok, status, json } (json null when the body is not JSON).
window.minaraCall = async function (method, url, data) {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const init = { method, credentials: "same-origin",
                 headers: { "X-CSRF-Token": csrf, "Content-Type": "application/json" } };
  if (data !== undefined) init.body = JSON.stringify(data);
  const r = await fetch(url, init);
  let json = null;
  try { json = await r.json(); } catch (e) { json = null; }
  return { ok: r.ok, status: r.status, json };
};

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const body = document.body;
  const live = document.getElementById("live");

  function enc(path) {
    return path.split("/").map(encodeURIComponent).join("/");
  }

  async function api(method, url, data, headers) {
    const init = { method, headers: { "X-CSRF-Token": csrf, ...(headers || {}) },
                   credentials: "same-origin" };
    if (data !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(data);
    }
    const response = await fetch(url, init);
    let json = null;
    try { json = await response.json(); } catch (e) { json = null; }
    return { status: response.status, ok: response.ok, json };
  }

  function say(el, text) {
    if (el) el.textContent = text;
  }

  // -- the editor -------------------------------------------------------------
  function editor() {
    const form = document.getElementById("editor-form");
    const area = document.getElementById("editor");
    const status = document.getElementById("save-status");
    const dialog = document.getElementById("conflict");
    const detail = document.getElementById("conflict-detail");
    const yours = document.getElementById("yours");
    const yoursText = document.getElementById("yours-text");
    const path = body.dataset.path;
    let loaded = area.value;
    let pending = null; // the 409 body while the dialog is open

    function dirty() { return area.value !== loaded; }

    function loadedAs(doc) {
      // what the header said about a newer version is answered now
      if (live.textContent.includes("saving will ask")) say(live, "");
      body.dataset.sha256 = doc.sha256 || "";
      body.dataset.version = String(doc.version);
      loaded = area.value;
      const meta = document.getElementById("file-meta");
      if (meta && doc.version) {
        meta.firstChild.textContent = "version " + doc.version +
          (doc.author ? " by " + doc.author + (doc.time ? " at " + doc.time : "") : "") + " ";
      }
    }

    async function save(base) {
      const headers = base ? { "If-Match": '"' + base + '"' } : {};
      say(status, "Saving…");
      const r = await api("PUT", "/v1/workspace/files/" + enc(path), { text: area.value },
                          headers);
      if (r.status === 409) {
        pending = r.json;
        say(status, "Not saved: the file changed.");
        detail.textContent = "It is now at version " + r.json.current_version + " (by " +
          (r.json.current_author || "unknown") + "). Your text was kept on the server too.";
        dialog.showModal();
        document.getElementById("conflict-refresh").focus();
        return;
      }
      if (!r.ok) {
        say(status, "Not saved: " + (r.json ? r.json.message : "error " + r.status));
        return;
      }
      loadedAs({ sha256: r.json.sha256, version: r.json.version });
      say(status, r.json.changed ? "Saved as version " + r.json.version + "."
                                 : "No change (version " + r.json.version + ").");
    }

    async function refresh(keepMine) {
      const mine = area.value;
      const r = await api("GET", "/v1/workspace/files/" + enc(path));
      if (!r.ok) { say(status, "Could not load: " + (r.json ? r.json.message : r.status)); return; }
      area.value = r.json.text;
      loadedAs(r.json);
      if (keepMine) {
        yoursText.value = mine;
        yours.hidden = false;
        say(status, "Loaded version " + r.json.version + "; your text is below.");
      }
    }

    form.addEventListener("submit", (e) => {
      e.preventDefault();
      save(body.dataset.sha256);
    });
    document.getElementById("conflict-overwrite").addEventListener("click", () => {
      dialog.close();
      const base = pending ? pending.current_sha256 : body.dataset.sha256;
      pending = null;
      save(base);
    });
    document.getElementById("conflict-refresh").addEventListener("click", () => {
      dialog.close();
      pending = null;
      refresh(true);
    });
    document.getElementById("conflict-cancel").addEventListener("click", () => {
      dialog.close();
      pending = null;
    });
    const reset = document.getElementById("reset-heartbeat");
    if (reset) {
      reset.addEventListener("click", async () => {
        if (!window.confirm("Replace HEARTBEAT.md with its template? The old text stays in history.")) return;
        const r = await api("POST", "/v1/workspace/heartbeat/reset",
                            { base: body.dataset.sha256 || null });
        if (r.ok) { await refresh(false); say(status, "Reset to the template (version " + r.json.version + ")."); }
        else say(status, "Not reset: " + (r.json ? r.json.message : r.status));
      });
    }
    window.addEventListener("beforeunload", (e) => {
      if (dirty()) e.preventDefault();
    });

    return function onCommit(event) {
      const mine = event.paths.find((p) => p.path === path);
      // this page's own saves come back too, and events may arrive late: only newer counts
      if (!mine || mine.version <= Number(body.dataset.version)) return;
      if (mine.deleted) { say(live, path + " was deleted by " + event.author + "."); return; }
      if (dirty()) {
        say(live, path + " changed (version " + mine.version + " by " + event.author +
            "); saving will ask what to do.");
      } else {
        refresh(false).then(() => say(live, path + " updated to version " + mine.version +
                                      " by " + event.author + "."));
      }
    };
  }

  // -- history: restore -----------------------------------------------------------
  function historyPage() {
    const path = body.dataset.path;
    document.querySelectorAll("button.restore").forEach((button) => {
      button.addEventListener("click", async () => {
        const v = button.dataset.version;
        if (!window.confirm("Bring back version " + v + " of " + path + " as a new version?")) return;
        const r = await api("POST", "/v1/workspace/restore/" + enc(path), { version: v });
        if (r.ok) window.location.assign("/workspace?path=" + encodeURIComponent(path));
        else say(document.getElementById("restore-status"),
                 "Not restored: " + (r.json ? r.json.message : r.status));
      });
    });
    return function onCommit(event) {
      if (event.paths.some((p) => p.path === path)) say(live, "New version by " + event.author + ": reload to see it.");
    };
  }

  // -- status: the commits as they come -------------------------------------------------
  function statusPage() {
    const list = document.getElementById("commits");
    return function onCommit(event) {
      const li = document.createElement("li");
      li.textContent = event.commit.slice(0, 10) + " " + event.author + " (" + event.source +
        "): " + event.paths.map((p) => p.path + " v" + p.version).join(", ");
      list.prepend(li);
    };
  }

  // -- a wiki page: reload when the page (or a page linking to it) changes ---------------
  function wikiPage() {
    return function onCommit(event) {
      const mine = (p) => p.path === body.dataset.path;
      const touches = event.paths.some((p) => mine(p)
        ? p.version > Number(body.dataset.version) : p.path.startsWith("wiki/"));
      if (touches) window.location.reload();
    };
  }

  const signOut = document.getElementById("sign-out");
  if (signOut) {
    signOut.addEventListener("click", async () => {
      const r = await api("POST", "/logout");
      if (r.ok) window.location.assign("/login?signed_out=1");
      else say(live, "Not signed out: error " + r.status);
    });
  }

  // memory review: its script (memory.js) listens for "minara:commit"
  function memoryPage() {
    return function onCommit(event) {
      document.dispatchEvent(new CustomEvent("minara:commit", { detail: event }));
    };
  }

  const handlers = { editor, history: historyPage, status: statusPage, wiki: wikiPage,
                     memory: memoryPage };
  const page = body.dataset.page;
  const onCommit = handlers[page] ? handlers[page]() : null;
  if (onCommit && window.EventSource) {
    const source = new EventSource("/v1/events");
    source.addEventListener("commit", (e) => {
      try { onCommit(JSON.parse(e.data)); } catch (err) { /* a malformed event is ignored */ }
    });
    source.addEventListener("open", () => { body.dataset.live = "on"; });
  }
})();

// -- the wiki: the page's "..." menu and the New page form ------------------------------
(function () {
  "use strict";
  const body = document.body;
  const enc = (p) => p.split("/").map(encodeURIComponent).join("/");

  const call = window.minaraCall;

  function wikiPage() {
    const name = body.dataset.name;
    const status = document.getElementById("wiki-status");
    const say = (r, what) => { status.textContent = what + ": " + (r.json ? r.json.message : r.status); };
    document.getElementById("wiki-rename").addEventListener("click", async () => {
      const title = window.prompt("New title for " + name);
      if (!title) return;
      const r = await call("POST", "/v1/wiki/rename/" + enc(name), { title });
      if (r.ok) window.location.reload(); else say(r, "Not renamed");
    });
    document.getElementById("wiki-move").addEventListener("click", async () => {
      const to = window.prompt("Move " + name + " (and the pages under it) to", name);
      if (!to || to === name) return;
      const r = await call("POST", "/v1/wiki/move", { from: name, to, fix_links: true });
      if (r.ok) window.location.assign("/wiki?name=" + encodeURIComponent(to));
      else say(r, "Not moved");
    });
    document.getElementById("wiki-delete").addEventListener("click", async () => {
      if (!window.confirm("Delete " + name + "? Its history stays; it can be restored.")) return;
      const r = await call("DELETE", "/v1/wiki/pages/" + enc(name));
      if (r.ok) window.location.assign("/wiki"); else say(r, "Not deleted");
    });
  }

  function newPage() {
    const form = document.getElementById("new-page");
    const status = document.getElementById("new-status");
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const name = form.elements.name.value.trim();
      const channel = form.elements.visibility.value === "channel"
        ? form.elements.channel.value.trim() : null;
      const data = { text: form.elements.text.value, base: "0" };
      if (form.elements.title.value.trim()) data.title = form.elements.title.value.trim();
      if (channel) data.channel = channel;
      const r = await call("PUT", "/v1/wiki/pages/" + enc(name), data);
      if (r.ok) {
        window.location.assign("/wiki?name=" + encodeURIComponent(r.json.name) +
                               (channel ? "&channel=" + encodeURIComponent(channel) : ""));
      } else {
        status.textContent = "Not created: " + (r.json ? r.json.message : r.status);
      }
    });
  }

  if (body.dataset.page === "wiki" && document.getElementById("wiki-rename")) wikiPage();
  if (body.dataset.page === "wiki-new") newPage();
})();

// The irkit TCC dashboard: renders the view the path names from the JSON
// routes under /ui/api/ and acts through the API (/v1/...). No framework,
// no build step. Every text goes through textContent (never innerHTML).
"use strict";
(() => {
  const TOKEN_KEY = "irkit-tcc-token";
  // The namespace the pages act in ("" : every namespace, for a token of
  // every namespace), kept in the tab beside the token.
  const NS_KEY = "irkit-tcc-namespace";
  const TERMINAL = ["completed", "failed", "cancelled"];
  const STATUSES = ["runnable", "suspended", "completed", "failed", "cancelled"];
  const POLL_MS = 500;
  const main = document.getElementById("main");
  const live = document.getElementById("live");

  class AuthError extends Error {}

  // h("div", {class: "x", onclick: f}, child, "text", ...)
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "class") e.className = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    e.append(...nodes(kids));
    return e;
  }

  // Children as nodes: arrays flattened, null/undefined/false left out.
  function nodes(kids) {
    return kids.flat(Infinity)
      .filter((k) => k !== null && k !== undefined && k !== false)
      .map((k) => (k instanceof Node ? k : document.createTextNode(String(k))));
  }

  function fill(el, ...kids) {
    el.replaceChildren(...nodes(kids));
  }

  // Short values on one line, longer ones indented.
  function json(v) {
    const flat = JSON.stringify(v);
    return flat !== undefined && flat.length <= 72 ? flat : JSON.stringify(v, null, 1);
  }

  function time(ms) {
    if (!ms) return "";
    return new Date(ms).toISOString().replace("T", " ").slice(0, 23);
  }

  function badge(status) {
    return h("span", { class: "badge " + status }, status);
  }

  function leaseText(lease) {
    if (!lease) return h("span", { class: "muted" }, "free");
    if (lease.active) return h("span", { class: "lease-held", title: "lease until " + time(lease.until_ms) }, "held by " + lease.owner);
    return h("span", { class: "muted" }, "expired (" + lease.owner + ")");
  }

  async function api(method, path, body) {
    const headers = { Accept: "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const ns = sessionStorage.getItem(NS_KEY);
    if (ns) headers["TCC-Namespace"] = ns;
    // The service admits a POST only as JSON (docs/tcc/host.md, "Browsers").
    if (body !== undefined || method === "POST") headers["Content-Type"] = "application/json";
    const r = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
    let j = null;
    try { j = await r.json(); } catch (_) { j = null; }
    if (r.status === 401) throw new AuthError("token needed");
    if (!r.ok) {
      const msg = j && j.error ? j.error.code + ": " + j.error.message : "HTTP " + r.status;
      throw new Error(msg);
    }
    return j;
  }

  function showLogin(again) {
    live.textContent = "";
    live.className = "live";
    const input = h("input", { type: "password", id: "token", placeholder: "bearer token", size: 40, autocomplete: "off" });
    const form = h("form", {
      id: "login",
      class: "row",
      onsubmit: (ev) => {
        ev.preventDefault();
        sessionStorage.setItem(TOKEN_KEY, input.value);
        route();
      },
    }, input, h("button", { type: "submit", id: "login-button" }, "Sign in"));
    fill(main, h("div", { class: "card" },
      h("h2", {}, "This service needs its bearer token"),
      again ? h("p", { class: "error" }, "The token was not accepted.") : null,
      h("p", { class: "muted" }, "The token is kept in this tab only (sessionStorage) and sent as Authorization: Bearer."),
      form));
    input.focus();
  }

  async function guarded(f) {
    try {
      await f();
    } catch (e) {
      if (e instanceof AuthError) {
        showLogin(!!sessionStorage.getItem(TOKEN_KEY));
      } else {
        fill(main, h("p", { class: "error", id: "error" }, String(e.message || e)));
      }
    }
  }

  // ---- executions list ----------------------------------------------------

  async function showList() {
    const params = new URLSearchParams(location.search);
    const programs = (await api("GET", "/ui/api/programs")).programs;
    const status = h("select", { name: "status", id: "filter-status" },
      h("option", { value: "" }, "any status"),
      STATUSES.map((s) => h("option", { value: s, selected: params.get("status") === s }, s)));
    const names = [...new Set(programs.map((p) => p.name))];
    const program = h("select", { name: "program", id: "filter-program" },
      h("option", { value: "" }, "any program"),
      names.map((n) => h("option", { value: n, selected: params.get("program") === n }, n)));
    const search = h("input", { type: "text", name: "q", id: "search", placeholder: "execution id (prefix)", size: 36, value: params.get("q") || "" });
    const form = h("form", { class: "filters", method: "get", action: "/ui", id: "filters" },
      status, program, search, h("button", { type: "submit", id: "apply" }, "Show"));
    const table = h("table", { id: "executions" });
    const pager = h("div", { class: "pager" });
    fill(main, h("h1", {}, "Executions"), h("div", { class: "card" }, form, table, pager));

    const query = new URLSearchParams();
    for (const k of ["status", "program", "q", "before"]) if (params.get(k)) query.set(k, params.get(k));
    const refresh = async () => {
      const page = await api("GET", "/ui/api/executions?" + query.toString());
      fill(table,
        h("thead", {}, h("tr", {}, ["id", "status", "program", "namespace", "revision", "lease", "updated"].map((c) => h("th", {}, c)))),
        h("tbody", {}, page.executions.map((e) => h("tr", { "data-id": e.id, "data-namespace": e.namespace },
          h("td", { class: "mono" }, h("a", { href: "/ui/executions/" + encodeURIComponent(e.id) }, e.id)),
          h("td", {}, badge(e.status), e.cancel_requested ? " cancel requested" : "", e.error ? h("span", { class: "error" }, " " + e.error) : ""),
          h("td", {}, e.program || h("span", { class: "muted" }, "(by hash)")),
          h("td", { class: "namespace" }, e.namespace),
          h("td", {}, e.revision),
          h("td", { class: "lease" }, leaseText(e.lease)),
          h("td", { class: "muted" }, time(e.updated_ms))))));
      if (page.executions.length === 0) table.append(h("caption", { class: "muted" }, "No executions match."));
      const links = [];
      if (params.get("before")) {
        const first = new URLSearchParams(query);
        first.delete("before");
        links.push(h("a", { href: "/ui?" + first.toString(), id: "first-page" }, "« newest"));
      }
      if (page.next) {
        const next = new URLSearchParams(query);
        next.set("before", page.next);
        links.push(h("a", { href: "/ui?" + next.toString(), id: "next-page" }, "older »"));
      }
      fill(pager, ...links);
    };
    await refresh();
    // The newest page follows new executions and status changes.
    if (!params.get("before")) {
      setLive(true);
      const tick = () => setTimeout(() => guarded(async () => { await refresh(); tick(); }), 2000);
      tick();
    }
  }

  function setLive(on) {
    live.textContent = on ? "live" : "";
    live.className = on ? "live on" : "live";
  }

  // ---- one execution ------------------------------------------------------

  function entryView(e) {
    const d = e.detail || {};
    let title = e.kind;
    const body = [];
    switch (e.kind) {
      case "checkpoint":
        title = "checkpoint r" + d.revision + " → " + d.status;
        break;
      case "effect":
        title = "effect " + (d.key || "") + " (" + (d.status || "") + ")";
        if (e.effect) {
          body.push(h("div", { class: "io" },
            h("span", {}, "input"), h("pre", { class: "effect-input" }, json(e.effect.input ? e.effect.input.plain : null)),
            e.effect.result ? [h("span", {}, "result"), h("pre", { class: "effect-result" }, json(e.effect.result.plain))] : null,
            e.effect.failure !== null && e.effect.failure !== undefined ? [h("span", {}, "failure"), h("pre", { class: "effect-failure" }, json(e.effect.failure))] : null));
        }
        break;
      case "event_received":
        title = "event received: " + d.name;
        break;
      case "timer_delivered":
      case "event_delivered":
      case "child_delivered":
        title = e.kind.replace("_", " ") + (d.branch ? " (branch " + d.branch + ")" : "");
        break;
      default:
        if (d && Object.keys(d).length) body.push(h("pre", {}, json(d)));
    }
    return h("li", { class: "kind-" + e.kind, "data-kind": e.kind, "data-seq": e.seq, "data-line": e.source ? e.source.line : null },
      h("div", { class: "entry-head" }, h("span", { class: "entry-kind" }, title), h("span", { class: "entry-time" }, "#" + e.seq + " · " + time(e.at_ms)),
        e.source ? h("span", { class: "entry-source", title: "where the execution stood (pc " + e.source.span_pc + " of fn " + e.source.func_id + ", checkpoint r" + e.source.revision + ")" }, sourceText(e.source)) : null),
      body);
  }

  // "file:line  text" for a location of the JSON API (its text when the
  // source was kept).
  function sourceText(loc) {
    const where = loc.file + ":" + loc.line;
    return loc.text === undefined ? where : where + "  " + loc.text.trim();
  }

  // The source text, its lines numbered, the current one marked.
  function sourceView(src) {
    return h("ol", { class: "source-text", id: "source-text" }, src.text.split("\n").map((l, i) =>
      h("li", { "data-line": i + 1 }, h("span", { class: "ln" }, i + 1), h("span", { class: "text" }, l.replace(/\r$/, "")))));
  }

  function highlightLine(view, loc) {
    view.querySelectorAll("li.src-current").forEach((li) => li.classList.remove("src-current"));
    if (!loc) return;
    const li = view.querySelector('li[data-line="' + loc.line + '"]');
    if (li) {
      li.classList.add("src-current");
      const box = view.getBoundingClientRect();
      const at = li.getBoundingClientRect();
      if (at.top < box.top || at.bottom > box.bottom) view.scrollTop += at.top - box.top - box.height / 3;
    }
  }

  // Every frame of the latest continuation with its slots (by index: the
  // format has no local names).
  function slotsView(frames) {
    if (!frames || frames.length === 0) return h("span", { class: "muted" }, "none (finished, or not yet checkpointed)");
    return frames.map((f, i) => h("div", { class: "frame", "data-func": f.func_id },
      h("h3", {}, "fn " + (f.function || f.func_id) + " · pc " + f.pc + (i === frames.length - 1 ? " (current)" : " (caller)"),
        f.source ? h("span", { class: "muted" }, " · " + f.source.file + ":" + f.source.line) : null),
      f.slots.length === 0 ? h("div", { class: "muted" }, "no slots") :
        h("table", { class: "slots" },
          h("thead", {}, h("tr", {}, ["slot", "", "value"].map((c) => h("th", {}, c)))),
          h("tbody", {}, f.slots.map((s) => h("tr", { "data-slot": s.slot },
            h("td", { class: "mono" }, s.slot),
            h("td", { class: "muted" }, s.param ? "param" : "local"),
            h("td", {}, h("code", { class: "slot-value" }, s.value.truncated ? s.value.preview + "… (" + s.value.bytes + " bytes)" : (s.value.tagged && s.value.tagged.t === "undefined" ? "undefined" : json(s.value.plain))))))))));
  }

  function pendingText(p) {
    if (!p) return "none";
    if (p.type === "effect") return "effect " + p.key;
    if (p.type === "wait" && p.kind) {
      const k = p.kind;
      if (k.type === "event") return "waiting for event " + JSON.stringify(k.event_name);
      if (k.type === "timer") return "timer due " + time(k.resume_at_ms);
      if (k.type === "child") return "waiting for child " + k.child_execution_id;
      if (k.type === "all" || k.type === "any") return "join (" + k.type + ")";
    }
    return json(p);
  }

  async function showExecution(id) {
    const status = h("span", { id: "status" });
    const summary = h("dl", { class: "kv", id: "summary" });
    const outcome = h("div", { id: "outcome" });
    const pending = h("div", { id: "pending" });
    const history = h("ol", { class: "timeline", id: "history" });
    const waits = h("table", { id: "waits" });
    const listing = h("div", { id: "listing" });
    const sourceLine = h("div", { id: "source-line", class: "mono" });
    const sourceBox = h("div", { id: "source" });
    const slots = h("div", { id: "slots" });
    const note = h("span", { id: "action-status", class: "muted" });
    const eventName = h("input", { type: "text", id: "event-name", placeholder: "event name", size: 24 });
    const payload = h("textarea", { id: "event-payload", placeholder: "payload (JSON; empty: null)" });
    const sendButton = h("button", { type: "submit", id: "send-event" }, "Send event");
    const cancelButton = h("button", { type: "button", id: "cancel", class: "danger", title: "its except/catch/finally handlers run when its artifact requires irkit.catchable_cancel" }, "Cancel execution");
    const terminateButton = h("button", { type: "button", id: "terminate", class: "danger", title: "cancel at once, without running its handlers" }, "Terminate");
    const resumeButton = h("button", { type: "button", id: "resume", title: "paused: let it run again; failed because an effect failed: run again from the checkpoint before that effect (earlier effects keep their results)" }, "Resume");
    const pauseButton = h("button", { type: "button", id: "pause", title: "nothing new of it runs until it is resumed (a running drive stops at its next wait)" }, "Pause");
    const eventForm = h("form", {
      id: "event-form",
      class: "actions",
      onsubmit: (ev) => {
        ev.preventDefault();
        guarded(async () => {
          let body = { name: eventName.value.trim() };
          const text = payload.value.trim();
          if (text) {
            try { body.payload = JSON.parse(text); } catch (e) { note.textContent = "payload is not JSON: " + e.message; return; }
          }
          note.textContent = "sending…";
          try {
            await api("POST", "/v1/executions/" + encodeURIComponent(id) + "/events", body);
            note.textContent = "event " + JSON.stringify(body.name) + " accepted";
          } catch (e) {
            if (e instanceof AuthError) throw e;
            note.textContent = String(e.message);
          }
          await refresh();
        });
      },
    }, h("div", { class: "row" }, eventName, sendButton), payload);
    cancelButton.addEventListener("click", () => guarded(async () => {
      note.textContent = "cancelling…";
      try {
        await api("POST", "/v1/executions/" + encodeURIComponent(id) + "/cancel");
        note.textContent = "cancellation requested";
      } catch (e) {
        if (e instanceof AuthError) throw e;
        note.textContent = String(e.message);
      }
      await refresh();
    }));
    terminateButton.addEventListener("click", () => guarded(async () => {
      note.textContent = "terminating…";
      try {
        await api("POST", "/v1/executions/" + encodeURIComponent(id) + "/terminate");
        note.textContent = "termination requested";
      } catch (e) {
        if (e instanceof AuthError) throw e;
        note.textContent = String(e.message);
      }
      await refresh();
    }));
    resumeButton.addEventListener("click", () => guarded(async () => {
      note.textContent = "resuming…";
      try {
        const r = await api("POST", "/v1/executions/" + encodeURIComponent(id) + "/resume");
        note.textContent = r.effect === undefined ? "resumed" : "resumed before effect " + JSON.stringify(r.effect);
      } catch (e) {
        if (e instanceof AuthError) throw e;
        note.textContent = String(e.message);
      }
      await refresh();
    }));
    pauseButton.addEventListener("click", () => guarded(async () => {
      note.textContent = "pausing…";
      try {
        await api("POST", "/v1/executions/" + encodeURIComponent(id) + "/pause");
        note.textContent = "paused";
      } catch (e) {
        if (e instanceof AuthError) throw e;
        note.textContent = String(e.message);
      }
      await refresh();
    }));
    const actions = h("div", { class: "card", id: "actions" }, h("h2", {}, "Act"), eventForm, h("div", { class: "row" }, pauseButton, cancelButton, terminateButton, resumeButton, note));

    fill(main,
      h("h1", {}, "Execution ", h("code", { id: "execution-id" }, id), status),
      h("div", { class: "grid" },
        h("div", {},
          h("div", { class: "card" }, h("h2", {}, "Summary"), summary),
          h("div", { class: "card" }, h("h2", {}, "Outcome"), outcome),
          h("div", { class: "card", id: "source-card" }, h("h2", {}, "Source"), sourceLine, sourceBox),
          h("div", { class: "card" }, h("h2", {}, "History"), history)),
        h("div", {},
          h("div", { class: "card" }, h("h2", {}, "Pending operation"), pending),
          h("div", { class: "card" }, h("h2", {}, "Slots"), slots),
          actions,
          h("div", { class: "card" }, h("h2", {}, "Waits, timers and children"), waits),
          h("div", { class: "card" }, h("h2", {}, "Program"), listing))));

    let artifact = null;
    let source = null;
    let timer = null;
    let running = false;
    let again = false;
    // One refresh at a time (the poll and an action may both ask); one
    // asked for meanwhile runs right after.
    const refresh = async () => {
      if (running) { again = true; return; }
      if (timer) { clearTimeout(timer); timer = null; }
      running = true;
      let terminal = false;
      try {
        terminal = await render();
      } finally {
        running = false;
      }
      if (again) { again = false; return refresh(); }
      if (!terminal) timer = setTimeout(() => guarded(refresh), POLL_MS);
    };
    const render = async () => {
      const doc = await api("GET", "/ui/api/executions/" + encodeURIComponent(id));
      const x = doc.execution;
      fill(status, badge(x.status));
      status.dataset.status = x.status;
      fill(summary,
        h("dt", {}, "program"), h("dd", {}, x.program || h("span", { class: "muted" }, "(started by hash)")),
        h("dt", {}, "namespace"), h("dd", { id: "execution-namespace" }, x.namespace),
        h("dt", {}, "artifact"), h("dd", { class: "mono" }, h("a", { href: "/ui/programs/" + encodeURIComponent(x.artifact_hash) }, x.artifact_hash)),
        h("dt", {}, "revision"), h("dd", { id: "revision" }, x.revision),
        h("dt", {}, "lease"), h("dd", { id: "lease" }, leaseText(doc.lease)),
        h("dt", {}, "args"), h("dd", {}, h("code", {}, JSON.stringify(x.args))),
        x.parent ? [h("dt", {}, "parent"), h("dd", { class: "mono" }, h("a", { href: "/ui/executions/" + encodeURIComponent(x.parent) }, x.parent), x.parent_branch ? " (branch " + x.parent_branch + ")" : "")] : null,
        h("dt", {}, "created"), h("dd", {}, time(x.created_ms)),
        h("dt", {}, "updated"), h("dd", {}, time(x.updated_ms)),
        x.cancel_requested ? [h("dt", {}, "cancel"), h("dd", {}, "requested")] : null,
        x.paused_by ? [h("dt", {}, "paused by"), h("dd", { id: "paused-by" }, x.paused_by === "program" ? "its program (resume it on the Programs page)" : x.paused_by)] : null,
        x.error ? [h("dt", {}, "host error"), h("dd", { class: "error", id: "host-error" }, x.error)] : null);
      if (x.status === "completed" && x.result) {
        fill(outcome, h("div", { class: "muted" }, "result"), h("pre", { id: "result" }, json(x.result.plain)));
      } else if (x.status === "failed" || x.status === "cancelled") {
        fill(outcome, h("div", { class: "error", id: "failure" }, x.message || x.error || x.status),
          x.result ? h("pre", {}, json(x.result.plain)) : null);
      } else {
        fill(outcome, h("span", { class: "muted" }, "not finished"));
      }
      fill(pending, h("div", { id: "pending-text" }, pendingText(x.pending)), x.pending ? h("pre", {}, json(x.pending)) : null);
      if (x.pending && x.pending.type === "wait" && x.pending.kind && x.pending.kind.type === "event"
          && !eventName.value && document.activeElement !== eventName) {
        eventName.value = x.pending.kind.event_name;
      }
      fill(history, ...doc.history.map(entryView));
      if (doc.history_truncated) history.append(h("li", { class: "muted" }, "(first " + doc.history.length + " entries)"));
      fill(waits,
        h("thead", {}, h("tr", {}, ["#", "kind", "what", "branch", "due", "state"].map((c) => h("th", {}, c)))),
        h("tbody", {}, doc.waits.map((w) => h("tr", { class: "wait-" + w.kind },
          h("td", {}, w.id),
          h("td", {}, w.kind),
          h("td", { class: "mono" }, w.kind === "child" && w.name ? h("a", { href: "/ui/executions/" + encodeURIComponent(w.name) }, w.name) : (w.name || "")),
          h("td", {}, w.branch || ""),
          h("td", { title: w.due_ms ? time(w.due_ms) : null }, w.due_ms ? time(w.due_ms).slice(11) : ""),
          h("td", {}, w.delivered ? "delivered" : "open")))));
      eventForm.querySelectorAll("input, textarea, button").forEach((e) => { e.disabled = x.terminal; });
      cancelButton.disabled = x.terminal;
      resumeButton.hidden = !(x.status === "failed" || (x.status === "paused" && x.paused_by !== "program"));
      pauseButton.hidden = x.terminal || x.status === "paused";
      if (!artifact) {
        try {
          artifact = await api("GET", "/ui/api/artifacts/" + encodeURIComponent(x.artifact_hash));
          fill(listing, listingView(artifact));
        } catch (e) {
          if (e instanceof AuthError) throw e;
          // E.g. the pinned artifact is missing: the rest of the page stays.
          artifact = { functions: [] };
          fill(listing, h("p", { class: "error", id: "listing-error" }, String(e.message)));
        }
      }
      highlight(listing, doc.frames || []);
      if (doc.source) {
        fill(sourceLine, h("span", { class: "muted" }, "pc " + doc.source.pc + " of fn " + doc.source.func_id + " at "), sourceText(doc.source));
      } else {
        fill(sourceLine, h("span", { class: "muted" }, x.terminal ? "finished" : "no source location (the artifact has no span here)"));
      }
      sourceLine.dataset.line = doc.source ? doc.source.line : "";
      if (source === null) {
        if (doc.source_file) {
          try {
            source = await api("GET", "/v1/artifacts/" + encodeURIComponent(x.artifact_hash) + "/source");
            fill(sourceBox, sourceView(source));
          } catch (e) {
            if (e instanceof AuthError) throw e;
            source = false;
            fill(sourceBox, h("p", { class: "error" }, String(e.message)));
          }
        } else {
          source = false;
          fill(sourceBox, h("p", { class: "muted", id: "no-source" }, "No source text was kept with this artifact (irkit tcc register FILE.py keeps it)."));
        }
      }
      if (source) {
        const view = sourceBox.querySelector("#source-text");
        if (view) highlightLine(view, doc.source && doc.source.file === source.file ? doc.source : null);
      }
      fill(slots, slotsView(doc.slots));
      setLive(!x.terminal);
      return x.terminal;
    };
    await refresh();
  }

  function highlight(listing, frames) {
    listing.querySelectorAll("li.pc-current, li.pc-caller").forEach((li) => li.classList.remove("pc-current", "pc-caller"));
    frames.forEach((f, i) => {
      const li = listing.querySelector('li[data-func="' + f.func_id + '"][data-pc="' + f.pc + '"]');
      if (li) li.classList.add(i === frames.length - 1 ? "pc-current" : "pc-caller");
    });
  }

  function listingView(a) {
    return h("div", { class: "program-listing" }, a.functions.map((f) => h("div", { class: "function", "data-func": f.id },
      h("h3", {}, "fn " + f.name + " (id " + f.id + ", " + f.param_count + " params, " + f.local_count + " locals)" + (f.entry ? " — entry" : "")),
      h("ol", { class: "listing" }, f.instructions.map((i) => h("li", { "data-func": f.id, "data-pc": i.pc },
        h("span", { class: "pc" }, i.pc), h("span", { class: "text" }, i.text)))))));
  }

  // ---- programs -----------------------------------------------------------

  function list(v) {
    return Array.isArray(v) && v.length ? v.join(", ") : "none";
  }

  async function showPrograms() {
    const programs = (await api("GET", "/ui/api/programs")).programs;
    const act = (name, action) => async () => {
      await guarded(async () => {
        await api("POST", "/v1/programs/" + encodeURIComponent(name) + "/" + action);
        await showPrograms();
      });
    };
    fill(main, h("h1", {}, "Programs"), h("div", { class: "card" }, h("table", { id: "programs" },
      h("thead", {}, h("tr", {}, ["name", "hash", "frontend", "language", "engine features", "host capabilities", "functions", "instructions", "state", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, programs.map((p) => {
        const env = p.envelope || {};
        return h("tr", { "data-name": p.name },
          h("td", {}, p.name),
          h("td", { class: "mono" }, h("a", { href: "/ui/programs/" + encodeURIComponent(p.hash) }, p.hash.slice(0, 16) + "…")),
          h("td", {}, p.stored ? env.frontend_id + " " + env.frontend_version : h("span", { class: "error" }, "artifact missing")),
          h("td", {}, env.language_semantics_version || ""),
          h("td", {}, list(env.required_engine_features)),
          h("td", {}, list(env.required_host_capabilities)),
          h("td", {}, p.functions ?? ""),
          h("td", {}, p.instructions ?? ""),
          h("td", { class: "state" }, badge(p.paused ? "paused" : "active")),
          h("td", {}, h("button", { type: "button", class: "toggle", onclick: act(p.name, p.paused ? "resume" : "pause") }, p.paused ? "Resume" : "Pause")));
      })))));
    if (programs.length === 0) main.append(h("p", { class: "muted" }, "No program is registered."));
  }

  async function showArtifact(hash) {
    const a = await api("GET", "/ui/api/artifacts/" + encodeURIComponent(hash));
    const env = a.envelope;
    fill(main,
      h("h1", {}, "Artifact ", h("code", {}, a.hash)),
      h("div", { class: "card" }, h("dl", { class: "kv", id: "envelope" },
        h("dt", {}, "names"), h("dd", {}, list(a.names)),
        h("dt", {}, "frontend"), h("dd", {}, env.frontend_id + " " + env.frontend_version),
        h("dt", {}, "language"), h("dd", {}, env.language_semantics_version),
        h("dt", {}, "engine features"), h("dd", {}, list(env.required_engine_features)),
        h("dt", {}, "host capabilities"), h("dd", {}, list(env.required_host_capabilities)))),
      h("div", { class: "card" }, h("h2", {}, "Instructions"), listingView(a)));
  }

  // ---- schedules ----------------------------------------------------------

  async function showSchedules() {
    const schedules = (await api("GET", "/v1/schedules")).schedules;
    const act = (name, action) => async () => {
      await guarded(async () => {
        await api("POST", "/v1/schedules/" + encodeURIComponent(name) + "/" + action);
        await showSchedules();
      });
    };
    fill(main, h("h1", {}, "Schedules"), h("div", { class: "card" }, h("table", { id: "schedules" },
      h("thead", {}, h("tr", {}, ["name", "program", "when", "overlap", "catch-up", "state", "next tick", "started", "skipped", "last execution", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, schedules.map((s) => h("tr", { "data-name": s.name },
        h("td", {}, s.name),
        h("td", {}, s.program),
        h("td", { class: "mono" }, s.cron !== undefined ? "cron " + s.cron : "every " + s.every),
        h("td", {}, s.overlap),
        h("td", {}, s.catchup + " (" + s.catchup_window_ms / 1000 + " s)"),
        h("td", { class: "state" }, badge(s.paused ? "paused" : "active"), s.last_error ? h("span", { class: "error" }, " " + s.last_error) : null),
        h("td", {}, s.paused ? "" : time(s.next_due_ms)),
        h("td", { class: "started" }, String(s.ticks_started)),
        h("td", {}, String(s.ticks_skipped)),
        h("td", { class: "mono" }, s.last_execution_id ? h("a", { href: "/ui/executions/" + encodeURIComponent(s.last_execution_id) }, s.last_execution_id) : ""),
        h("td", {}, h("button", { type: "button", class: "toggle", onclick: act(s.name, s.paused ? "resume" : "pause") }, s.paused ? "Resume" : "Pause"))))))));
    if (schedules.length === 0) main.append(h("p", { class: "muted" }, "No schedule exists (irkit tcc schedule create)."));
  }

  // ---- namespace picker ---------------------------------------------------

  // Fills the header's picker with the namespaces the token may name
  // (GET /v1/namespaces) and settles the tab's choice: kept when still
  // allowed, else "" (every namespace) for a token of every namespace,
  // "default" when the token has it, else its first namespace.
  async function picker() {
    const select = document.getElementById("namespace");
    const j = await api("GET", "/v1/namespaces");
    let chosen = sessionStorage.getItem(NS_KEY) || "";
    const allowed = (j.every ? [""] : []).concat(j.namespaces);
    if (!allowed.includes(chosen)) {
      chosen = j.every ? "" : (j.namespaces.includes("default") ? "default" : j.namespaces[0] || "");
    }
    if (chosen) sessionStorage.setItem(NS_KEY, chosen);
    else sessionStorage.removeItem(NS_KEY);
    fill(select, allowed.map((n) => h("option", { value: n, selected: n === chosen }, n || "all namespaces")));
    select.hidden = false;
    select.onchange = () => {
      if (select.value) sessionStorage.setItem(NS_KEY, select.value);
      else sessionStorage.removeItem(NS_KEY);
      // One execution or artifact belongs to one namespace: back to the list.
      const listing = ["/ui", "/ui/", "/ui/programs", "/ui/schedules"].includes(location.pathname);
      location.assign(listing ? location.pathname : "/ui");
    };
  }

  function route() {
    const p = location.pathname;
    let m;
    const show = (f) => guarded(async () => { await picker(); await f(); });
    if ((m = p.match(/^\/ui\/executions\/([^/]+)$/))) return show(() => showExecution(decodeURIComponent(m[1])));
    if (p === "/ui/programs") return show(showPrograms);
    if (p === "/ui/schedules") return show(showSchedules);
    if ((m = p.match(/^\/ui\/programs\/([^/]+)$/))) return show(() => showArtifact(decodeURIComponent(m[1])));
    return show(showList);
  }

  route();
})();

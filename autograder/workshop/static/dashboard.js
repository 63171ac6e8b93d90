// The workshop dashboard: polls api/state every two seconds and draws it. Every string that came from a
// participant is put on the page as text (textContent), never as HTML; the page's policy (CSP) also
// forbids inline scripts. The host's token stays in the URL fragment, which is never sent to a server.
"use strict";
(function () {
  const POLL_MS = 2000;
  const STATUSES = ["not_started", "failing", "passed"];
  const $ = (id) => document.getElementById(id);

  function params() { return new URLSearchParams(location.hash.slice(1)); }
  function view() { return params().get("view") || "projector"; }
  function token() { return params().get("token") || ""; }
  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token()) h.Authorization = "Bearer " + token();
    const xsrf = document.cookie.match(/(?:^|; )_xsrf=([^;]*)/);  // on a JupyterHub: its cookie login's guard
    if (xsrf) h["X-XSRFToken"] = decodeURIComponent(xsrf[1]);
    return h;
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells) {
    const tr = document.createElement("tr");
    for (const c of cells) tr.appendChild(c instanceof Node ? c : el("td", c));
    return tr;
  }
  function num(n, cls) { return el("td", n, "num" + (cls ? " " + cls : "")); }

  function navigation() {
    for (const a of document.querySelectorAll("nav a")) {
      const p = params();
      p.set("view", a.dataset.view);
      a.href = "#" + p.toString();
      a.classList.toggle("active", a.dataset.view === view());
    }
    document.body.dataset.view = view();
    $("helper").hidden = view() === "projector";
    $("controls").hidden = view() !== "controls";
  }

  function drawGrid(data) {
    const body = $("grid").tBodies[0];
    const rows = data.grid.map((g) => {
      const total = g.passed + g.failing + g.not_started;
      const bar = el("div", null, "bar");
      bar.title = g.passed + " passed, " + g.failing + " failing, " + g.not_started + " not started";
      for (const s of ["passed", "failing", "not_started"]) {
        const part = el("span", null, s);
        part.style.width = (total ? (100 * g[s]) / total : 0) + "%";
        bar.appendChild(part);
      }
      const pace = el("td");
      pace.appendChild(bar);
      const tr = row([el("td", g.exercise, "code"), num(g.not_started, "n-not_started"), num(g.failing, "n-failing"),
                      num(g.passed, "n-passed"), pace, num(g.median_minutes === null ? "–" : g.median_minutes)]);
      tr.dataset.exercise = g.exercise;
      return tr;
    });
    body.replaceChildren(...rows);
  }

  function drawLists(data) {
    const t = data.thresholds;
    $("stuck-note").textContent = "still failing after " + t.attempts + " runs or " + t.minutes + " minutes";
    $("stuck").replaceChildren(...(data.stuck.length ? data.stuck.map((s) => {
      const li = el("li");
      li.append(el("span", s.exercise, "code"), ": " + s.count + " stuck");
      return li;
    }) : [el("li", "nobody", "muted")]));
    $("top-checks").replaceChildren(...data.top_checks.map((c) => {
      const li = el("li");
      li.append(el("span", c.exercise, "code"), " › " + c.check + " (" + c.participants + ")");
      return li;
    }));
    $("top-ops").replaceChildren(...data.top_ops.map((o) => {
      const li = el("li");
      li.append(el("span", o.op, "code"), " (" + o.participants + ")");
      return li;
    }));
  }

  function drawSpotlight(data) {
    const s = data.spotlight;
    $("spotlight").hidden = !s;
    $("spotlight-meta").textContent = s ? s.exercise + (s.op ? " · " + s.op : "") : "";
    $("spotlight-line").textContent = s ? s.line : "";
  }

  function drawHelper(data, exercises) {
    $("stuck-people").tBodies[0].replaceChildren(...data.stuck_people.map((p) => row([
      p.seat || "–", p.pseudonym, p.exercise, p.failures, p.minutes, p.error || "", p.op || "", p.checks.join(", ")])));
    const head = row([el("th", "seat"), el("th", "pseudonym"), ...exercises.map((e) => el("th", e))]);
    $("people").tHead.replaceChildren(head);
    $("people").tBodies[0].replaceChildren(...data.people.map((p) => row([
      p.seat || "–", p.pseudonym,
      ...exercises.map((e) => { const s = p.cells[e] || "not_started"; return el("td", s.replace("_", " "), s); })])));
  }

  function drawControls(data) {
    $("lines").tBodies[0].replaceChildren(...data.lines.map((l) => {
      const button = el("button", "Spotlight");
      button.type = "button";
      button.addEventListener("click", () => spotlight(l.id));
      const tr = row([el("td", l.exercise, "code"), el("td", l.op || "", "code"), el("td", l.line, "code"),
                      num(l.reports), el("td")]);
      tr.lastChild.appendChild(button);
      tr.dataset.line = l.id;
      return tr;
    }));
  }

  async function spotlight(id) {
    await fetch("api/spotlight", {method: "POST", body: JSON.stringify({id: id}), credentials: "same-origin",
                                  headers: headers({"Content-Type": "application/json", "X-Workshop": "1"})});
    poll(true);
  }

  let timer = null;
  let polls = 0;
  async function poll(once) {
    if (!once) { clearTimeout(timer); }
    try {
      const response = await fetch("api/state?view=" + encodeURIComponent(view()),
                                   {headers: headers(), cache: "no-store", credentials: "same-origin"});
      if (!response.ok) {
        $("status").textContent = response.status === 401 || response.status === 403
          ? "not allowed (HTTP " + response.status + "): open the URL the server printed" : "HTTP " + response.status;
      } else {
        const data = await response.json();
        document.body.dataset.role = data.role;
        navigation();
        const exercises = data.grid.map((g) => g.exercise);
        $("participants").textContent = data.participants + (data.participants === 1 ? " participant" : " participants");
        drawGrid(data);
        drawLists(data);
        drawSpotlight(data);
        if (data.stuck_people) drawHelper(data, exercises);
        if (data.lines) drawControls(data);
        polls += 1;
        document.body.dataset.polls = String(polls);
        $("status").textContent = "updated " + new Date().toLocaleTimeString();
      }
    } catch (e) {
      $("status").textContent = "server unreachable; retrying";
    }
    if (!once) timer = setTimeout(poll, POLL_MS);
  }

  $("clear-spotlight").addEventListener("click", () => spotlight(null));
  window.addEventListener("hashchange", () => { navigation(); poll(); });
  navigation();
  poll();
})();

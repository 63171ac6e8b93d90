// The workshop dashboard. It asks for api/state with the version it last drew; the server answers when the
// room has changed (a long poll), so a report shows within a fraction of a second, and asks again at once.
// Every string that came from a participant is put on the page as text (textContent), never as HTML; the
// page's policy (CSP) also forbids inline scripts. The token stays in the URL fragment, never sent to a
// server but in the Authorization header of this page's own requests.
"use strict";
(function () {
  const RETRY_MS = 2000;
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
  function button(text, onclick) {
    const b = el("button", text);
    b.type = "button";
    b.addEventListener("click", onclick);
    return b;
  }
  function problem(text) {
    $("problem").hidden = !text;
    $("problem").textContent = text || "";
  }

  function navigation() {
    for (const a of document.querySelectorAll("nav a")) {
      const p = params();
      p.set("view", a.dataset.view);
      a.href = "#" + p.toString();
      a.classList.toggle("active", a.dataset.view === view());
    }
    document.body.dataset.view = view();
    $("helper").hidden = $("room").hidden = view() === "projector";
    $("controls").hidden = view() !== "controls";
  }

  // The join panel folds to its one line once the room has joined (the server says: someone has, and nobody
  // for --fold-join-after seconds); a click on it opens or folds it, and from then on that choice stands.
  let joinToggled = false, joinWanted = true;  // the toggle event comes later, as a task: compare, not flag
  function drawJoin(join) {
    $("join").hidden = !join;  // on a JupyterHub nobody joins: the hub says who is who
    if (!join) return;
    $("join-code").textContent = join.code;
    $("join-summary").textContent = join.urls.length ? 'check.join("' + join.urls[0] + '")' : join.code;
    if (!joinToggled) {
      joinWanted = !join.folded;
      $("join").open = joinWanted;
    }
    $("join-urls").replaceChildren(...join.urls.map((u) => el("li", 'check.join("' + u + '", seat="")')));
    const canvas = $("qr");
    canvas.hidden = !join.qr.length;
    if (!join.qr.length) return;
    const n = join.qr.length + 4, scale = Math.floor(canvas.width / n), ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = "#000";
    join.qr.forEach((line, y) => {
      for (let x = 0; x < line.length; x++) if (line[x] === "1") ctx.fillRect((x + 2) * scale, (y + 2) * scale, scale, scale);
    });
  }

  function drawGrid(data) {
    $("grid").tBodies[0].replaceChildren(...data.grid.map((g) => {
      const total = g.passed + g.failing + g.not_started;
      const bar = el("div", null, "bar");
      bar.title = g.passed + " passed, " + g.failing + " failing, " + g.not_started + " not started";
      for (const s of ["passed", "failing", "not_started"]) {
        const part = el("span", null, s);
        part.style.width = (total ? (100 * g[s]) / total : 0) + "%";
        bar.appendChild(part);
      }
      const pace = el("td", null, "pace-cell");
      pace.appendChild(bar);
      const name = el("td", g.exercise, "code");
      name.title = g.title;
      const tr = row([name, num(g.not_started, "n-not_started"), num(g.failing, "n-failing"),
                      num(g.passed, "n-passed"), pace, num(g.median_minutes === null ? "–" : g.median_minutes)]);
      tr.dataset.exercise = g.exercise;
      return tr;
    }));
  }

  function item(parts) {
    const li = el("li");
    li.append(...parts);
    return li;
  }

  function drawLists(data) {
    const t = data.thresholds;
    $("stuck-note").textContent = t.attempts + "+ failed runs over " + t.minutes + "+ minutes; gone after " +
      t.gone_minutes + " minutes unseen";
    $("stuck").replaceChildren(...(data.stuck.length ? data.stuck.map((s) =>
      item([el("span", s.exercise, "code"), ": ", el("span", s.count, "count"), " stuck"])) : [el("li", "nobody", "muted")]));
    $("misconceptions").replaceChildren(...(data.misconceptions.length ? data.misconceptions.map((m) =>
      item([el("span", m.label), ": ", el("span", m.participants, "count"), " (", el("span", m.exercise, "code"), ")"]))
      : [el("li", "none seen yet", "muted")]));
    $("top-checks").replaceChildren(...data.top_checks.map((c) =>
      item([el("span", c.exercise, "code"), " › " + c.check + " (" + c.participants + ")"])));
    $("top-ops").replaceChildren(...data.top_ops.map((o) =>
      item([el("span", o.exercise, "code"), " › ", el("span", o.op, "code"), " (" + o.participants + ")"])));
  }

  function drawSpotlight(data) {
    const s = data.spotlight;
    $("spotlight").hidden = !s;
    if (!s) return;
    const idea = s.kind === "misconception";
    $("spotlight-title").textContent = idea ? s.label : "In the spotlight";
    $("spotlight-meta").textContent = s.exercise + (s.op ? " · " + s.op : "");
    $("spotlight-line").textContent = idea ? "" : s.line;
    $("spotlight-line").hidden = idea;
    $("spotlight-text").textContent = idea ? s.explanation : "";
    $("spotlight-read").textContent = idea ? "In the course: " + s.read : "";
  }

  function drawHelper(data, exercises) {
    $("stuck-people").replaceChildren(...(data.stuck_people.length ? data.stuck_people.map((p) => {
      const li = item([el("span", (p.seat || "no seat") + " · " + p.pseudonym, "who"), el("br"),
        el("span", p.exercise, "code"), ": " + p.failures + " failed runs in " + p.minutes + " min, " + p.status +
        (p.misconception ? "; looks like: " + p.misconception : "") + (p.op ? "; op " + p.op : "") +
        (p.checks.length ? "; failing " + p.checks.join(", ") : "")]);
      if (p.feedback) li.appendChild(el("pre", p.feedback));
      li.dataset.seat = p.seat;
      return li;
    }) : [el("li", "nobody stuck", "muted")]));
    $("notes").replaceChildren(...(data.notes.length ? data.notes.map((n) =>
      item([el("span", (n.seat || "no seat") + " · " + n.pseudonym, "who"), ": " + n.note + ", " + n.minutes + " min ago"]))
      : [el("li", "no notes", "muted")]));
    $("people").tHead.replaceChildren(row([el("th", "seat"), el("th", "pseudonym"), ...exercises.map((e) => el("th", e))]));
    $("people").tBodies[0].replaceChildren(...data.people.map((p) => {
      const tr = row([p.seat || "–", p.pseudonym + (p.here ? "" : " (gone)"),
        ...exercises.map((e) => { const s = p.cells[e] || "not started"; return el("td", s, s.replace(" ", "_")); })]);
      if (!p.here) tr.className = "gone";
      return tr;
    }));
  }

  function drawControls(data) {
    $("control-misconceptions").replaceChildren(...(data.misconceptions.length ? data.misconceptions.map((m) =>
      item([el("span", m.label + ": " + m.participants, "who"), " ", el("span", m.exercise, "code"),
            button("Project", () => post("api/spotlight", {misconception: m.id})), el("br"),
            el("span", m.explanation, "small")])) : [el("li", "none seen yet", "muted")]));
    $("lines").tBodies[0].replaceChildren(...data.lines.map((l) => {
      const tr = row([el("td", l.exercise, "code"), el("td", l.op || "", "code"), el("td", l.line, "code"),
                      num(l.reports), el("td")]);
      tr.lastChild.appendChild(button("Spotlight", () => post("api/spotlight", {id: l.id})));
      tr.dataset.line = l.id;
      return tr;
    }));
    const select = $("hint-exercise");
    if (select.options.length === 1) {
      for (const g of data.grid) { const o = el("option", g.exercise); o.value = g.exercise; select.appendChild(o); }
    }
    const starting = $("start-exercise");
    if (starting.options.length === 0) {
      for (const g of data.grid) { const o = el("option", g.exercise); o.value = g.exercise; starting.appendChild(o); }
    }
    $("hints").replaceChildren(...data.hints.map((h) =>
      item([(h.exercise || "all") + ", " + h.minutes_ago + " min ago: ", el("span", h.text)])));
    const l = data.limits;
    $("limits").textContent = data.participants + " here, " + data.gone + " gone; at most " + l.max_participants +
      ". Refused: " + l.refused.full + " newcomers (room full), " + l.refused.rate + " requests (too fast), " +
      l.refused.invalid + " invalid, " + l.refused.secret + " wrong secrets, " + l.connections_refused + " connections.";
    if (document.activeElement !== $("limit")) $("limit").value = l.max_participants;
    $("helpers-link").textContent = (data.helpers || []).join(" ");
  }

  async function post(path, body) {
    const response = await fetch(path, {method: "POST", body: JSON.stringify(body), credentials: "same-origin",
      headers: headers({"Content-Type": "application/json", "X-Workshop": "1"})});
    if (!response.ok) problem("The server refused: HTTP " + response.status);
  }

  let version = null, room = null, controller = null, polls = 0;
  function draw(data) {
    document.body.dataset.role = data.role;
    navigation();
    if (room !== null && data.room !== room) problem("This is a new room: the server was started afresh.");
    room = data.room;
    const exercises = data.grid.map((g) => g.exercise);
    $("participants").textContent = data.participants + " here" +
      (data.gone ? ", " + data.gone + " gone" : "");
    drawJoin(data.join);
    drawGrid(data);
    drawLists(data);
    drawSpotlight(data);
    if (data.stuck_people) drawHelper(data, exercises);
    if (data.lines) drawControls(data);
    polls += 1;
    document.body.dataset.polls = String(polls);
    document.body.dataset.version = String(data.version);
    $("status").textContent = "live · " + new Date().toLocaleTimeString();
  }

  async function loop() {
    for (;;) {
      controller = new AbortController();
      const since = version === null ? "" : "&since=" + version;
      try {
        const response = await fetch("api/state?view=" + encodeURIComponent(view()) + since,
          {headers: headers(), cache: "no-store", credentials: "same-origin", signal: controller.signal});
        if (response.status === 401 || response.status === 403) {
          problem("This page's token is not this room's (HTTP " + response.status + "): open the URL the server printed.");
          await new Promise((r) => setTimeout(r, RETRY_MS));
          continue;
        }
        if (!response.ok) throw new Error("HTTP " + response.status);
        const data = await response.json();
        if ($("problem").textContent.startsWith("This page") || $("problem").textContent.startsWith("The server is")) problem("");
        version = data.version;
        draw(data);
      } catch (e) {
        if (e.name === "AbortError") { version = null; continue; }
        problem("The server is unreachable; retrying.");
        version = null;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  $("join").addEventListener("toggle", () => { if ($("join").open !== joinWanted) joinToggled = true; });
  $("clear-spotlight").addEventListener("click", () => post("api/spotlight", {id: null}));
  $("hint-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("api/hint", {text: $("hint-text").value, exercise: $("hint-exercise").value || null});
    $("hint-text").value = "";
  });
  $("start-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("api/start", {exercise: $("start-exercise").value});
  });
  $("limit-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("api/limits", {max_participants: parseInt($("limit").value, 10)});
  });
  window.addEventListener("hashchange", () => { navigation(); if (controller) controller.abort(); });
  navigation();
  loop();
})();

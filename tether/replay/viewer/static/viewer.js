/* tether run viewer: replays a trace (docs/trace.md) tick by tick.
 *
 * The trace comes from the server (GET trace?offset=N, polled with --live) or, in an exported
 * file, from the inline <script id="trace-data"> with frames inlined as data URLs. The tree is
 * drawn with cytoscape + dagre; every panel shows the selected tick. Per node, per blackboard key
 * and per camera the viewer keeps a list of (tick, value) changes and finds the value at a tick
 * by binary search, so scrubbing a long run costs the same as a short one.
 */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const MARKED = { failure: 1, error: 1, recovery: 1, retry: 1, preempted: 1 };
  const COLOURS = { SUCCESS: "#2e9d4f", FAILURE: "#d9453b", RUNNING: "#e6a317", INVALID: "#c9ccd1" };
  const EVENT_COLOURS = { failure: "#d9453b", error: "#d9453b", recovery: "#ef7d16",
    retry: "#ef7d16", preempted: "#8e44ad" };
  const inline = document.getElementById("trace-data");
  const frameData = inline ? JSON.parse(document.getElementById("frames-data").textContent) : null;
  const config = JSON.parse(document.getElementById("viewer-config").textContent);

  const T = {
    header: null, nodes: [], children: [], ticks: [], end: null,
    nodeHist: [], bbHist: new Map(), events: [], frames: [], cameras: [],
  };
  const view = { tick: 1, selected: null, collapsed: new Set(), playing: null, follow: true,
    query: "" };
  let cy = null;

  // --- reading the trace -------------------------------------------------------------------
  function ingest(text) {
    let added = false;
    for (const line of text.split("\n")) {
      if (!line) continue;
      let r;
      try { r = JSON.parse(line); } catch (e) { continue; } // a torn last line
      if (r.k === "header") T.header = r;
      else if (r.k === "tree") setTree(r.nodes);
      else if (r.k === "end") T.end = r;
      else if (r.k === "tick") { addTick(r); added = true; }
    }
    return added;
  }

  function setTree(nodes) {
    T.nodes = nodes;
    T.children = nodes.map(() => []);
    for (const n of nodes) if (n.parent !== null) T.children[n.parent].push(n.id);
    T.nodeHist = nodes.map(() => []);
  }

  function addTick(r) {
    if (!r.visited) r.visited = T.ticks.length ? T.ticks[T.ticks.length - 1].visited : [];
    T.ticks.push(r);
    const t = r.t;
    for (const id in r.changes || {}) {
      const [status, feedback] = r.changes[id];
      T.nodeHist[+id].push([t, status, feedback]);
    }
    for (const key in r.bb || {}) {
      if (!T.bbHist.has(key)) T.bbHist.set(key, []);
      T.bbHist.get(key).push([t, r.bb[key], false]);
    }
    for (const key of r.bb_del || []) T.bbHist.get(key).push([t, null, true]);
    for (const e of r.events || []) T.events.push(Object.assign({ t: t }, e));
    if (r.frames) {
      for (const cam in r.frames) if (!T.cameras.includes(cam)) T.cameras.push(cam);
      T.frames.push([t, r.frames]);
    }
  }

  function lastAt(list, t) { // the last entry whose tick is <= t, or null
    let lo = 0, hi = list.length - 1, found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid][0] <= t) { found = list[mid]; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }
  function statusAt(id, t) {
    const h = lastAt(T.nodeHist[id], t);
    return h ? [h[1], h[2]] : ["INVALID", ""];
  }
  function frameUrl(path) { return frameData ? frameData[path] : "run/" + path; }
  function lastTick() { return T.ticks.length ? T.ticks[T.ticks.length - 1].t : 1; }
  function tickRecord(t) { return T.ticks[t - T.ticks[0].t]; }
  function nodeName(id) { return T.nodes[id] ? T.nodes[id].name : String(id); }
  function eventText(e) {
    if (e.kind === "error") return `${e.code} in '${e.node}': ${e.message}`;
    const who = typeof e.node === "number" ? nodeName(e.node) : e.node;
    let text = `${e.kind} ${who}`;
    if (e.kind === "recovery") text += ` (after '${nodeName(e.after)}' failed)`;
    if (e.kind === "retry") text += ` (failure ${e.failures})`;
    if (e.feedback && e.kind === "failure") text += `: ${e.feedback}`;
    if (e.kind === "localized") {
      const seen = Object.entries(e.objects).map(([n, o]) =>
        o.error_cm === undefined ? n : `${n} ${o.error_cm.toFixed(1)} cm`);
      text = `localized ${seen.join(", ")}` + (e.missing.length ? `; not seen: ${e.missing.join(", ")}` : "");
    }
    return text;
  }

  // --- the tree graph ----------------------------------------------------------------------
  function buildGraph() {
    const elements = [];
    for (const n of T.nodes) {
      elements.push({ data: { id: "n" + n.id, label: `${n.name}\n${n.type}`, status: "INVALID" } });
      if (n.parent !== null) elements.push({ data: { id: `e${n.id}`, source: "n" + n.parent, target: "n" + n.id } });
    }
    cy = cytoscape({
      container: $("graph"), elements: elements,
      boxSelectionEnabled: false, autoungrabify: true,
      style: [
        { selector: "node", style: {
          shape: "round-rectangle", label: "data(label)", "text-wrap": "wrap", "text-max-width": 128,
          "text-valign": "center", "font-size": 11, width: 136, height: 46, "background-color": COLOURS.INVALID,
          "border-width": 1, "border-color": "#8a929c", color: "#111" } },
        { selector: 'node[status = "SUCCESS"]', style: { "background-color": COLOURS.SUCCESS, color: "#fff" } },
        { selector: 'node[status = "FAILURE"]', style: { "background-color": COLOURS.FAILURE, color: "#fff" } },
        { selector: 'node[status = "RUNNING"]', style: { "background-color": COLOURS.RUNNING } },
        { selector: "node.stale", style: { "background-opacity": 0.35, "border-style": "dashed", color: "#333" } },
        { selector: "node.collapsed", style: { "border-width": 3, "border-style": "double", "border-color": "#35507a" } },
        { selector: "node.match", style: { "overlay-color": "#2f73c9", "overlay-opacity": 0.25, "overlay-padding": 4 } },
        { selector: "node:selected", style: { "border-width": 3, "border-color": "#1d2430" } },
        { selector: "node.tip", style: { "border-width": 3, "border-color": "#b07a00" } },
        { selector: "edge", style: { width: 1.5, "line-color": "#a9b1bb", "target-arrow-shape": "none",
          "curve-style": "taxi", "taxi-direction": "downward" } },
        { selector: "edge.active", style: { width: 3, "line-color": "#6b7480" } },
      ],
    });
    cy.on("tap", "node", (ev) => select(+ev.target.id().slice(1)));
    cy.on("dbltap", "node", (ev) => toggleCollapse(+ev.target.id().slice(1)));
    relayout();
  }

  function descendants(id, out) {
    for (const c of T.children[id]) { out.push(c); descendants(c, out); }
    return out;
  }
  function relayout() {
    const hidden = new Set();
    for (const id of view.collapsed) for (const d of descendants(id, [])) hidden.add(d);
    cy.batch(() => {
      for (const n of T.nodes) {
        const el = cy.getElementById("n" + n.id);
        el.style("display", hidden.has(n.id) ? "none" : "element");
        const below = T.children[n.id].length ? descendants(n.id, []).length : 0;
        el.toggleClass("collapsed", view.collapsed.has(n.id));
        el.data("label", `${n.name}\n${n.type}` + (view.collapsed.has(n.id) ? ` (+${below})` : ""));
      }
    });
    // dagre puts siblings fed to it earlier further right: feed them in reverse, so children
    // read left to right in the order of the tree file
    cy.elements(":visible").layout({ name: "dagre", rankDir: "TB", nodeSep: 12, rankSep: 34,
      animate: false, fit: true, padding: 20,
      sort: (a, b) => order(b) - order(a) }).run();
  }
  function order(el) { // nodes by id (pre-order), edges by their child's id, edges after nodes
    return el.isNode() ? +el.id().slice(1) : T.nodes.length + +el.target().id().slice(1);
  }
  function toggleCollapse(id) {
    if (!T.children[id].length) return;
    if (view.collapsed.has(id)) view.collapsed.delete(id); else view.collapsed.add(id);
    relayout();
  }

  // --- showing a tick ----------------------------------------------------------------------
  function show(t) {
    if (!T.ticks.length) return;
    view.tick = Math.max(T.ticks[0].t, Math.min(lastTick(), t));
    t = view.tick;
    const rec = tickRecord(t);
    const visited = new Set(rec.visited);
    cy.batch(() => {
      for (const n of T.nodes) {
        const el = cy.getElementById("n" + n.id);
        el.data("status", statusAt(n.id, t)[0]);
        el.toggleClass("stale", !visited.has(n.id));
        el.toggleClass("tip", rec.tip === n.id);
      }
      cy.edges().forEach((e) => e.toggleClass("active", visited.has(+e.target().id().slice(1))));
    });
    const cmd = rec.cmd ? ` · cmd by '${rec.cmd.by}'` : " · hold";
    $("tick-label").textContent = `tick ${t} / ${lastTick()} · step ${rec.step} · ${rec.sim.toFixed(2)} s · root ${rec.root}${cmd}`;
    $("tick-label").dataset.tick = t;
    $("tick-events").innerHTML = "";
    for (const e of rec.events || []) {
      const span = document.createElement("span");
      span.className = "ev-" + e.kind;
      span.textContent = eventText(e);
      $("tick-events").appendChild(span);
    }
    showFrames(t);
    showBlackboard(t);
    showDetails();
    drawTimeline();
  }

  function showFrames(t) {
    if (!T.cameras.length) return;
    const list = $("frame-list");
    list.innerHTML = "";
    const f = lastAt(T.frames, t);
    if (!f) { list.innerHTML = '<p class="empty">no frame yet</p>'; return; }
    // each camera's latest frame at or before t
    for (const cam of T.cameras) {
      let entry = f;
      for (let i = T.frames.indexOf(f); i >= 0 && !(cam in entry[1]); i--) entry = T.frames[i];
      if (!(cam in entry[1])) continue;
      const fig = document.createElement("figure");
      const img = document.createElement("img");
      img.src = frameUrl(entry[1][cam]);
      img.alt = `${cam} at tick ${entry[0]}`;
      img.dataset.tick = entry[0];
      img.dataset.camera = cam;
      const cap = document.createElement("figcaption");
      cap.textContent = `${cam} · tick ${entry[0]}` + (entry[0] === t ? "" : ` (${t - entry[0]} ticks before)`);
      fig.append(img);
      const seen = localizedAt(entry[0], cam);
      if (seen) fig.append(overlay(seen));
      fig.append(cap);
      list.appendChild(fig);
    }
  }

  // what camera perception saw at that tick: its estimates (filled) and the truth (rings)
  function localizedAt(t, cam) {
    const rec = tickRecord(t);
    return (rec && rec.events || []).find((e) => e.kind === "localized" && e.camera.name === cam);
  }
  function overlay(e) {
    const ns = "http://www.w3.org/2000/svg";
    const [h, w] = e.camera.size;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.setAttribute("class", "perceived");
    const dot = (px, cls, title) => {
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("cx", px[0]); c.setAttribute("cy", px[1]); c.setAttribute("r", 2.5);
      c.setAttribute("class", cls);
      const tip = document.createElementNS(ns, "title");
      tip.textContent = title;
      c.appendChild(tip);
      svg.appendChild(c);
    };
    for (const [name, o] of Object.entries(e.objects)) {
      if (o.truth_px) dot(o.truth_px, "truth", `${name}: simulator's truth`);
      dot(o.px, "estimate", `${name}: seen` + (o.error_cm === undefined ? "" : `, ${o.error_cm.toFixed(1)} cm off`));
    }
    return svg;
  }

  function showBlackboard(t) {
    const body = $("bb-table").tBodies[0];
    body.innerHTML = "";
    const q = view.query;
    let n = 0;
    for (const key of [...T.bbHist.keys()].sort()) {
      const h = lastAt(T.bbHist.get(key), t);
      if (!h || h[2]) continue;
      const text = JSON.stringify(h[1]);
      if (q && !key.toLowerCase().includes(q) && !text.toLowerCase().includes(q)) continue;
      const tr = body.insertRow();
      tr.dataset.key = key;
      if (h[0] === t) tr.className = "changed";
      tr.insertCell().textContent = key;
      tr.cells[0].className = "key";
      const cell = tr.insertCell();
      cell.className = "val";
      cell.textContent = text.length > 400 ? text.slice(0, 400) + "…" : text;
      cell.title = h[0] === t ? "written this tick" : `written at tick ${h[0]}`;
      n++;
    }
    $("bb-count").textContent = `(${n} keys at tick ${t})`;
  }

  function select(id) {
    view.selected = id;
    cy.elements().unselect();
    cy.getElementById("n" + id).select();
    showDetails();
  }
  function showDetails() {
    const box = $("node-info");
    if (view.selected === null) return;
    const n = T.nodes[view.selected];
    const [status, feedback] = statusAt(n.id, view.tick);
    const rows = [["name", n.name], ["type", `${n.type} (${n.class})`], ["status", null],
      ["feedback", feedback || "—"], ["origin", n.origin || "—"]];
    if (n.file) rows.push(["tree file", n.file]);
    for (const [k, v] of Object.entries(n.params || {})) rows.push(["· " + k, JSON.stringify(v)]);
    for (const [k, v] of Object.entries(n.bindings || {})) rows.push(["⇢ " + k, JSON.stringify(v)]);
    const dl = document.createElement("dl");
    for (const [k, v] of rows) {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k;
      if (v === null) { dd.textContent = status; dd.className = "status " + status; dd.id = "node-status"; }
      else dd.textContent = v;
      dl.append(dt, dd);
    }
    const hist = document.createElement("div");
    hist.id = "history";
    const h = T.nodeHist[n.id];
    const now = lastAt(h, view.tick);
    for (const [t, s, fb] of h.slice(-300)) {
      const row = document.createElement("div");
      row.textContent = `tick ${t}: ${s}${fb ? " — " + fb : ""}`;
      if (now && now[0] === t) row.className = "now";
      row.onclick = () => { stop(); show(t); };
      hist.appendChild(row);
    }
    box.innerHTML = "";
    box.append(dl, Object.assign(document.createElement("p"), { className: "empty",
      textContent: `status history (${h.length} changes${h.length > 300 ? ", last 300 shown" : ""})` }), hist);
    const cur = hist.querySelector(".now");
    if (cur) cur.scrollIntoView({ block: "nearest" });
  }

  // --- the timeline ------------------------------------------------------------------------
  function drawTimeline() {
    const c = $("timeline");
    const w = (c.width = c.clientWidth * devicePixelRatio), h = (c.height = 56 * devicePixelRatio);
    const g = c.getContext("2d");
    g.clearRect(0, 0, w, h);
    if (!T.ticks.length) return;
    const first = T.ticks[0].t, span = Math.max(1, lastTick() - first);
    const x = (t) => ((t - first) / span) * (w - 2) + 1;
    const band = h * 0.35;
    for (let px = 0; px < w; px++) { // the root status, one sample per pixel
      const t = Math.round(first + (px / w) * span);
      g.fillStyle = COLOURS[tickRecord(Math.min(t, lastTick())).root];
      g.fillRect(px, h - band, 1, band);
    }
    for (const e of T.events) {
      if (!MARKED[e.kind]) continue;
      g.fillStyle = EVENT_COLOURS[e.kind];
      const px = x(e.t);
      const top = e.kind === "preempted" ? 2 : e.kind === "recovery" || e.kind === "retry" ? 12 : 22;
      g.fillRect(px - 1.5 * devicePixelRatio, top * devicePixelRatio, 3 * devicePixelRatio, 9 * devicePixelRatio);
    }
    g.fillStyle = "#1d2430";
    g.fillRect(x(view.tick) - devicePixelRatio, 0, 2 * devicePixelRatio, h);
  }
  function tickAtX(clientX) {
    const c = $("timeline"), r = c.getBoundingClientRect();
    const first = T.ticks[0].t, span = Math.max(1, lastTick() - first);
    return Math.round(first + ((clientX - r.left) / r.width) * span);
  }

  // --- playing, stepping, searching ----------------------------------------------------------
  function stop() { if (view.playing) { clearInterval(view.playing); view.playing = null; $("play").textContent = "play"; } }
  function play() {
    if (view.playing) { stop(); return; }
    if (view.tick >= lastTick()) show(T.ticks[0].t);
    $("play").textContent = "pause";
    const rate = +$("speed").value, per = Math.max(1, Math.round(rate / 50));
    view.playing = setInterval(() => {
      if (view.tick >= lastTick()) { if (!config.live) stop(); return; }
      show(view.tick + per);
    }, Math.max(20, 1000 / rate));
  }
  function jumpEvent(dir, filter) {
    const marked = T.events.filter((e) => (filter ? filter(e) : MARKED[e.kind]));
    const ticks = marked.map((e) => e.t);
    const t = dir > 0 ? ticks.find((x) => x > view.tick) : [...ticks].reverse().find((x) => x < view.tick);
    if (t !== undefined) { stop(); show(t); }
  }
  function matchesEvent(e, q) { return eventText(e).toLowerCase().includes(q); }
  function search(q) {
    view.query = q.trim().toLowerCase();
    q = view.query;
    cy.batch(() => {
      for (const n of T.nodes) {
        const hay = `${n.name} ${n.type} ${n.class} ${JSON.stringify(n.params || {})}`.toLowerCase();
        cy.getElementById("n" + n.id).toggleClass("match", !!q && hay.includes(q));
      }
    });
    const box = $("search-results");
    box.innerHTML = "";
    if (q) {
      const hits = T.events.filter((e) => matchesEvent(e, q));
      const nodes = cy.nodes(".match").length;
      box.append(`${nodes} nodes, ${hits.length} events: `);
      for (const e of hits.slice(0, 40)) {
        const s = document.createElement("span");
        s.textContent = `t${e.t} ${eventText(e)}`;
        s.onclick = () => { stop(); show(e.t); };
        box.appendChild(s);
      }
    }
    showBlackboard(view.tick);
  }

  function bind() {
    $("first").onclick = () => { stop(); show(T.ticks[0].t); };
    $("last").onclick = () => { stop(); show(lastTick()); };
    $("back").onclick = () => { stop(); show(view.tick - 1); };
    $("fwd").onclick = () => { stop(); show(view.tick + 1); };
    $("play").onclick = play;
    $("prev-event").onclick = () => jumpEvent(-1);
    $("next-event").onclick = () => jumpEvent(1);
    $("fit").onclick = () => cy.fit(undefined, 20);
    $("collapse-subtrees").onclick = () => {
      for (const n of T.nodes) if (n.type === "subtree" && T.children[n.id].length) view.collapsed.add(n.id);
      relayout();
    };
    $("expand-all").onclick = () => { view.collapsed.clear(); relayout(); };
    $("search").addEventListener("input", (e) => search(e.target.value));
    $("search").addEventListener("keydown", (e) => {
      if (e.key === "Enter") jumpEvent(e.shiftKey ? -1 : 1, (ev) => matchesEvent(ev, view.query));
    });
    let dragging = false;
    const c = $("timeline");
    c.addEventListener("mousedown", (e) => { dragging = true; stop(); show(tickAtX(e.clientX)); });
    window.addEventListener("mousemove", (e) => { if (dragging) show(tickAtX(e.clientX)); });
    window.addEventListener("mouseup", () => { dragging = false; });
    window.addEventListener("resize", drawTimeline);
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      const keys = { ArrowLeft: () => $("back").onclick(), ArrowRight: () => $("fwd").onclick(),
        " ": play, Home: () => $("first").onclick(), End: () => $("last").onclick(),
        "[": () => jumpEvent(-1), "]": () => jumpEvent(1) };
      if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
    });
  }

  function showHeader() {
    const h = T.header || {};
    const tree = (h.tree || "").split("/").pop();
    $("run-info").textContent = `${tree} · ${h.task || ""}${h.init_state !== undefined ? " · init " + h.init_state : ""} · ${h.instruction || ""}`;
    const out = $("outcome");
    if (T.end && T.end.success !== undefined) {
      out.textContent = `${T.end.success ? "SUCCESS" : "FAILURE"} · ${T.end.steps} steps`;
      out.className = "badge " + (T.end.success ? "SUCCESS" : "FAILURE");
    } else {
      out.textContent = T.end && T.end.aborted ? `aborted: ${T.end.aborted}` : "unfinished";
      out.className = "badge UNFINISHED";
    }
  }

  // --- start ---------------------------------------------------------------------------------
  let offset = 0;
  async function fetchMore() {
    const res = await fetch(`trace?offset=${offset}`);
    if (!res.ok) throw new Error(`trace: HTTP ${res.status}`);
    offset = +res.headers.get("X-Next-Offset");
    return ingest(await res.text());
  }
  function start() {
    showHeader();
    if (!T.nodes.length) { $("tick-label").textContent = "waiting for the tree…"; return false; }
    if (!cy) { buildGraph(); bind(); }
    if (T.ticks.length) show(config.live ? lastTick() : T.ticks[0].t);
    document.body.dataset.ready = "1";
    return true;
  }
  async function main() {
    const t0 = performance.now();
    if (inline) ingest(inline.textContent);
    else await fetchMore();
    start();
    window.tether.loadMs = performance.now() - t0;
    if (config.live) {
      $("live-badge").hidden = false;
      setInterval(async () => {
        const atEnd = view.tick >= lastTick();
        if (await fetchMore()) {
          if (!cy) start();
          else if (atEnd && !view.playing) show(lastTick());
          else drawTimeline();
        }
        showHeader();
      }, 500);
    }
  }
  window.tether = { T: T, view: view, show: show, select: select, statusAt: statusAt,
    shownStatus: (id) => cy.getElementById("n" + id).data("status"), search: search };
  main().catch((e) => { $("tick-label").textContent = "could not load the trace: " + e.message; });
})();

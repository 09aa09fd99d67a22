/* The replay viewer: plain JavaScript, no framework, no build step.
 *
 * Safety rule: text from the transcript (model output above all) reaches the page only
 * through textContent. Nothing here assigns innerHTML.
 *
 * The pure functions at the top have no DOM and are also loaded by node in the tests,
 * which compare visibleTo/eventsFor with the engine's Python rule.
 */
(function (root) {
  "use strict";

  // --- pure logic -------------------------------------------------------------------

  // The engine's rule (core/events.py, Visibility.allows): an event is public, or it
  // lists the seats that may see it. An empty list is "log only": no player saw it.
  function visibleTo(event, seat) {
    const vis = event.visibility;
    return vis === "public" || (Array.isArray(vis) && vis.indexOf(seat) !== -1);
  }

  // perspective null is the omniscient view: every event, log-only ones included.
  function eventsFor(events, perspective) {
    if (perspective === null) return events.slice();
    return events.filter((e) => visibleTo(e, perspective));
  }

  // The last index whose event is at or before `seq`, so a perspective switch keeps the
  // replay at the same moment of the game.
  function indexAtOrBefore(events, seq) {
    let found = 0;
    for (let i = 0; i < events.length; i++) {
      if (events[i].seq <= seq) found = i;
      else break;
    }
    return found;
  }

  // Hash format: #view=all|K&seq=N&ids=0|1 (seq, not step index: a step index differs
  // between perspectives, a seq names one moment of the game).
  function parseHash(hash) {
    const params = new URLSearchParams(String(hash || "").replace(/^#/, ""));
    const view = params.get("view");
    const seq = parseInt(params.get("seq") || "", 10);
    const seat = parseInt(view || "", 10);
    return {
      perspective: view && view !== "all" && seat > 0 ? seat : null,
      seq: Number.isFinite(seq) ? seq : null,
      showIds: params.get("ids") === "1",
    };
  }

  function formatHash(state) {
    const view = state.perspective === null ? "all" : String(state.perspective);
    return "#view=" + view + "&seq=" + state.seq + "&ids=" + (state.showIds ? "1" : "0");
  }

  const api = { visibleTo, eventsFor, indexAtOrBefore, parseHash, formatHash };
  if (typeof module === "object" && module.exports) module.exports = api;
  if (typeof document === "undefined") return;
  root.StillePostViewer = api;

  // --- DOM helpers ------------------------------------------------------------------

  const PALETTE_SIZE = 12;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function seatClass(seat) {
    return "seat-c" + (((seat - 1) % PALETTE_SIZE + PALETTE_SIZE) % PALETTE_SIZE + 1);
  }

  function str(value) {
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // --- the page ---------------------------------------------------------------------

  const data = JSON.parse(document.getElementById("game-data").textContent);
  const models = {};
  data.seats.forEach((s) => { models[s.seat] = s.model; });

  function seatLabel(seat) {
    const span = el("span", "who " + seatClass(seat), "Player " + seat);
    if (models[seat]) span.appendChild(el("span", "model", " · " + models[seat]));
    return span;
  }

  function gmLabel() {
    return el("span", "who gm", "GAME MASTER");
  }

  function textBlock(text) {
    return el("p", "text", text);
  }

  // One timeline entry; `seat` (or null) picks the colour of the seat it belongs to.
  function row(cls, seat) {
    const li = el("li", "ev " + cls);
    if (seat !== null && seat !== undefined) li.classList.add(seatClass(seat));
    return li;
  }

  function divider(ev) {
    const li = row("divider", null);
    li.appendChild(el("span", null, str(ev.data.text)));
    return li;
  }

  function head(ev, label) {
    const h = el("div", "ev-head");
    h.appendChild(label);
    if (ev.visibility !== "public") {
      const seats = Array.isArray(ev.visibility) ? ev.visibility : [];
      const to = seats.length ? "private → " + seats.map((s) => "P" + s).join(", ") : "log only";
      h.appendChild(el("span", "lock", to));
    }
    return h;
  }

  function gmBox(cls) {
    return function (ev) {
      const li = row("gm " + cls, null);
      li.appendChild(head(ev, gmLabel()));
      li.appendChild(textBlock(str(ev.data.text)));
      return li;
    };
  }

  // Games without a layout of their own: one card per event, its text and its fields.
  function generic(ev) {
    const bySeat = ev.actor !== null && ev.actor !== undefined;
    const li = row(bySeat ? "generic" : "generic gm", ev.actor);
    const label = bySeat ? seatLabel(ev.actor) : gmLabel();
    const h = head(ev, label);
    h.insertBefore(el("span", "type", ev.type), h.children[1] || null);
    li.appendChild(h);
    if (typeof ev.data.text === "string") li.appendChild(textBlock(ev.data.text));
    const fields = Object.keys(ev.data).filter((k) => k !== "text");
    if (fields.length) {
      const dl = el("dl", "fields");
      fields.forEach((k) => {
        dl.appendChild(el("dt", null, k));
        dl.appendChild(el("dd", null, str(ev.data[k])));
      });
      li.appendChild(dl);
    }
    return li;
  }

  // A game's own layout (static/layouts/GAME.js, inlined before this file) registers a
  // factory under its game name; it gets these building blocks and returns
  // {roundTitle, types: {event_type: render}}. Any type it leaves out renders generically.
  const kit = { el, seatClass, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox };
  // Games share a few conventions (turn_start carries a text); the rest is generic.
  const GENERIC = { roundTitle: (r) => "Round " + r, types: { turn_start: divider } };
  const factory = (root.StillePostLayouts || {})[data.game];
  const layout = typeof factory === "function" ? factory(kit) : GENERIC;

  function renderEvent(ev) {
    const render = layout.types[ev.type] || generic;
    const node = render(ev);
    node.dataset.seq = String(ev.seq);
    node.dataset.type = ev.type;
    node.dataset.round = String(ev.round);
    if (ev.visibility !== "public") node.classList.add("private");
    return node;
  }

  // --- state and controls -----------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  const timeline = $("timeline");
  const state = { perspective: null, cursor: 0, showIds: false, timer: null };
  let events = [];
  let nodes = [];
  let headers = []; // [{node, first}] one round heading and the index of its first event

  function rebuild() {
    events = eventsFor(data.events, state.perspective);
    nodes = [];
    headers = [];
    timeline.textContent = "";
    let round = null;
    events.forEach((ev, i) => {
      if (ev.round !== round) {
        round = ev.round;
        const h = el("li", "round-head", layout.roundTitle(round));
        h.dataset.round = String(round);
        timeline.appendChild(h);
        headers.push({ node: h, first: i });
      }
      const node = renderEvent(ev);
      nodes.push(node);
      timeline.appendChild(node);
    });
    const roundSelect = $("round");
    roundSelect.textContent = "";
    headers.forEach((h) => {
      const opt = el("option", null, layout.roundTitle(Number(h.node.dataset.round)));
      opt.value = h.node.dataset.round;
      roundSelect.appendChild(opt);
    });
    const viewing = $("viewing");
    viewing.hidden = state.perspective === null;
    viewing.textContent = state.perspective === null ? "" :
      "Viewing as Player " + state.perspective + ": only what this player was shown.";
    if (!events.length) timeline.appendChild(el("li", "empty", "This transcript has no events to show."));
  }

  // Seat cards: status and private hints as of the cursor, from the visible events only.
  function updateSeats(upto) {
    const status = {};
    const won = {};
    const hints = {};
    for (let i = 0; i <= upto && i < events.length; i++) {
      const ev = events[i];
      if (ev.type === "eliminated" && ev.data.seat) status[ev.data.seat] = "eliminated (" + str(ev.data.cause) + ")";
      (Array.isArray(ev.data.winners) ? ev.data.winners : []).forEach((s) => {
        status[s] = ev.data.phase ? "won at identity guess #" + ev.data.phase : "won";
        won[s] = true;
      });
      if (ev.type === "hint" && ev.data.seat) {
        (hints[ev.data.seat] = hints[ev.data.seat] || []).push(str(ev.data.kind) + ": " + str(ev.data.value));
      }
    }
    document.querySelectorAll(".seat-card").forEach((card) => {
      const seat = Number(card.dataset.seat);
      card.querySelector(".seat-status").textContent = status[seat] || "in the game";
      card.classList.toggle("won", Boolean(won[seat]));
      card.classList.toggle("gone", Boolean(status[seat]) && !won[seat]);
      card.classList.toggle("me", state.perspective === seat);
      const ul = card.querySelector(".seat-hints");
      ul.textContent = "";
      (hints[seat] || []).forEach((h) => ul.appendChild(el("li", null, "hint · " + h)));
    });
  }

  function update() {
    const last = events.length - 1;
    state.cursor = Math.max(0, Math.min(state.cursor, last));
    nodes.forEach((node, i) => {
      node.hidden = i > state.cursor;
      node.classList.toggle("current", i === state.cursor);
    });
    headers.forEach((h) => { h.node.hidden = h.first > state.cursor; });
    const current = nodes[state.cursor];
    if (current && typeof current.scrollIntoView === "function") current.scrollIntoView({ block: "nearest" });
    $("position").textContent = events.length ? "Step " + (state.cursor + 1) + " / " + events.length : "No steps";
    if (current) $("round").value = current.dataset.round;
    const placements = $("placements");
    placements.hidden = !(events.length && state.cursor === last && data.result);
    if (!placements.hidden && typeof placements.scrollIntoView === "function") {
      placements.scrollIntoView({ block: "nearest" });
    }
    $("first").disabled = $("prev").disabled = state.cursor <= 0;
    $("next").disabled = $("last").disabled = state.cursor >= last;
    updateSeats(state.cursor);
    writeHash();
  }

  function writeHash() {
    if (!events.length) return;
    const hash = formatHash({ perspective: state.perspective, seq: events[state.cursor].seq, showIds: state.showIds });
    $("permalink").href = hash;
    if (location.hash === hash) return;
    try {
      history.replaceState(null, "", hash); // no history entry per step, no hashchange
    } catch (e) {
      location.hash = hash; // some browsers refuse replaceState on file:// pages
    }
  }

  function go(index) {
    state.cursor = index;
    update();
  }

  function step(delta) {
    go(state.cursor + delta);
    if (state.cursor >= events.length - 1) pause();
  }

  function setPerspective(perspective) {
    const seq = events.length ? events[state.cursor].seq : 0;
    state.perspective = perspective;
    $("perspective").value = perspective === null ? "all" : String(perspective);
    rebuild();
    state.cursor = indexAtOrBefore(events, seq);
    update();
  }

  function setShowIds(show) {
    state.showIds = show;
    $("show-ids").checked = show;
    document.body.classList.toggle("ids-hidden", !show);
    writeHash();
  }

  function interval() {
    return 1200 / (parseFloat($("speed").value) || 1);
  }

  function play() {
    if (state.timer !== null) return;
    if (state.cursor >= events.length - 1) go(0);
    state.timer = setInterval(() => step(1), interval());
    $("play").textContent = "❚❚ Pause";
    document.body.classList.add("playing");
  }

  function pause() {
    if (state.timer === null) return;
    clearInterval(state.timer);
    state.timer = null;
    $("play").textContent = "▶ Play";
    document.body.classList.remove("playing");
  }

  function applyHash() {
    const h = parseHash(location.hash);
    setShowIds(h.showIds);
    const known = h.perspective !== null && Object.prototype.hasOwnProperty.call(models, h.perspective);
    state.perspective = known ? h.perspective : null;
    $("perspective").value = state.perspective === null ? "all" : String(state.perspective);
    rebuild();
    state.cursor = h.seq === null ? 0 : indexAtOrBefore(events, h.seq);
    update();
  }

  $("perspective").addEventListener("change", (e) => {
    const v = e.target.value;
    setPerspective(v === "all" ? null : parseInt(v, 10));
  });
  $("show-ids").addEventListener("change", (e) => setShowIds(e.target.checked));
  $("first").addEventListener("click", () => { pause(); go(0); });
  $("prev").addEventListener("click", () => { pause(); step(-1); });
  $("next").addEventListener("click", () => { pause(); step(1); });
  $("last").addEventListener("click", () => { pause(); go(events.length - 1); });
  $("play").addEventListener("click", () => (state.timer === null ? play() : pause()));
  $("speed").addEventListener("change", () => { if (state.timer !== null) { pause(); play(); } });
  $("round").addEventListener("change", (e) => {
    pause();
    const h = headers.find((x) => x.node.dataset.round === e.target.value);
    if (h) go(h.first);
  });
  document.addEventListener("keydown", (e) => {
    const tag = e.target && e.target.tagName;
    if (tag === "SELECT" || tag === "TEXTAREA" || (tag === "INPUT" && e.target.type !== "checkbox")) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (tag === "BUTTON" && (e.key === " " || e.key === "Enter")) return; // the button's own click
    const actions = {
      ArrowRight: () => { pause(); step(1); },
      ArrowLeft: () => { pause(); step(-1); },
      Home: () => { pause(); go(0); },
      End: () => { pause(); go(events.length - 1); },
      " ": () => (state.timer === null ? play() : pause()),
    };
    if (actions[e.key]) {
      e.preventDefault();
      actions[e.key]();
    }
  });
  window.addEventListener("hashchange", applyHash);

  applyHash();
})(typeof window !== "undefined" ? window : globalThis);

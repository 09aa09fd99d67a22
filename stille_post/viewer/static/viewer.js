/* The replay viewer: plain JavaScript, no framework, no build step.
 *
 * Safety rule: text from the transcript (model output above all) reaches the page only
 * through textContent. Nothing here assigns innerHTML.
 *
 * Anti-spoiler rule: the document holds only what the chosen perspective has seen up
 * to the current step. Later timeline entries and the final table are detached (not
 * hidden), the embedded data block is removed once parsed, and a game's layout is given
 * the perspective's events up to the cursor (the whole record only when omniscient).
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

  const dataBlock = document.getElementById("game-data");
  const data = JSON.parse(dataBlock.textContent);
  // Parsed once and dropped: the full record (secrets included) then lives only in this
  // closure, and the document holds only what the chosen perspective has seen so far.
  dataBlock.remove();
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

  // A pill in a seat's colour: "Player 3" or "P3 · koala" (layouts put them in rows).
  function seatChip(seat, text) {
    const chip = el("span", "seat-chip " + seatClass(seat));
    chip.appendChild(el("span", "seat-chip-who", "Player " + seat));
    if (text !== undefined && text !== null) chip.appendChild(el("span", "seat-chip-text", text));
    return chip;
  }

  // A small label on a seat card or chip: a hidden role, "accused", "dealer".
  function tag(text, cls) {
    return el("span", "tag" + (cls ? " " + cls : ""), text);
  }

  // Vote counts as bars, most votes first: rows of [seat label, bar, count, note].
  function tally(counts, notes) {
    const seats = Object.keys(counts).map(Number).sort((a, b) => counts[b] - counts[a] || a - b);
    const most = Math.max(1, ...seats.map((s) => Number(counts[s]) || 0));
    const table = el("div", "tally");
    seats.forEach((s) => {
      const n = Number(counts[s]) || 0;
      const line = el("div", "tally-row " + seatClass(s));
      line.appendChild(el("span", "tally-who", "Player " + s));
      const bar = el("span", "tally-bar");
      const fill = el("span", "tally-fill");
      // CSSOM, not a style attribute: the CSP forbids inline style attributes.
      fill.style.width = Math.round((100 * n) / most) + "%";
      bar.appendChild(fill);
      line.appendChild(bar);
      line.appendChild(el("span", "tally-n", String(n)));
      line.appendChild(el("span", "tally-note", (notes && notes[s]) || ""));
      table.appendChild(line);
    });
    return table;
  }

  // --- the generic view -------------------------------------------------------------
  //
  // Every game declares how its event types map onto a few generic kinds (the
  // vocabulary, GameDefinition.events). Games without a layout, and the event types a
  // layout leaves out, are drawn from that kind alone, so a new game reads well with no
  // JavaScript of its own. Types outside the vocabulary (a game not installed where the
  // page was made) fall back to a card listing the event's fields.

  const vocabulary = data.vocabulary || {};

  function kindOf(ev) {
    return Object.prototype.hasOwnProperty.call(vocabulary, ev.type) ? vocabulary[ev.type] : null;
  }

  // The words the event is about: its kind's text_key, else its `text`.
  function wordsOf(ev, kind) {
    const key = kind && kind.text_key ? kind.text_key : "text";
    const value = ev.data[key] !== undefined ? ev.data[key] : ev.data.text;
    return str(value);
  }

  function seatOf(ev) {
    const s = ev.data.seat !== undefined && ev.data.seat !== null ? ev.data.seat : ev.actor;
    return typeof s === "number" ? s : null;
  }

  function gmLine(cls, kind) {
    return (ev) => {
      const li = row("gm " + cls, null);
      li.appendChild(head(ev, gmLabel()));
      li.appendChild(textBlock(wordsOf(ev, kind)));
      return li;
    };
  }

  const BY_KIND = {
    // "[Player X] words", in the speaker's colour.
    speech: (ev, kind) => {
      const seat = seatOf(ev);
      if (seat === null) return gmLine("notice", kind)(ev);
      const li = row("msg", seat);
      li.appendChild(head(ev, seatLabel(seat)));
      li.appendChild(textBlock(wordsOf(ev, kind)));
      return li;
    },
    heading: (ev, kind) => {
      const li = row("divider", null);
      li.appendChild(el("span", null, wordsOf(ev, kind) || ev.type));
      return li;
    },
    notice: (ev, kind) => gmLine("notice", kind)(ev),
    // The lock in the head names who was told; the row is tinted by renderEvent.
    private: (ev, kind) => gmLine("notice", kind)(ev),
    elimination: (ev, kind) => {
      const seat = seatOf(ev);
      const li = row("out", seat);
      const p = el("p", "out-line");
      p.appendChild(el("span", "badge out-badge", "OUT"));
      if (seat !== null) p.appendChild(seatLabel(seat));
      li.appendChild(p);
      const words = wordsOf(ev, kind);
      if (words) li.appendChild(textBlock(words));
      return li;
    },
    game_over: (ev, kind) => gmLine("end", kind)(ev),
    reveal: (ev, kind) => gmLine("end reveal-line", kind)(ev),
    // Structure whose meaning is already in another line: one quiet line.
    silent: (ev, kind) => {
      const li = row("quiet", seatOf(ev));
      li.appendChild(el("span", "type", ev.type));
      const words = ev.data[kind.text_key];
      if (words !== undefined) li.appendChild(el("span", "quiet-text", str(words)));
      return li;
    },
  };

  // An event type the page knows nothing about: one card with its text and its fields.
  function fieldsCard(ev) {
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

  function generic(ev) {
    const kind = kindOf(ev);
    const render = kind && BY_KIND[kind.generic];
    if (!render) return fieldsCard(ev);
    const li = render(ev, kind);
    li.classList.add("kind-" + kind.generic);
    return li;
  }

  // A game's own layout (a JS file in its folder, inlined before this file by page.py)
  // registers a factory under its game name in StillePostLayouts. The factory gets
  // these building blocks and returns
  //   {roundTitle, types: {event_type: render(ev) -> node},
  //    board?(shown, ctx) -> node, seats?(shown, ctx) -> {seat: {status, won, gone, tags}}}
  // `shown` is what this perspective has seen up to the current step, never more:
  // whatever a layout draws from it cannot run ahead of the replay. Types a layout
  // leaves out render generically.
  const kit = {
    el, seatClass, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox,
    seatChip, tag, tally, generic, kindOf,
  };
  const GENERIC = { roundTitle: (r) => "Round " + r, types: {} };
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
  const board = $("board");
  const placements = $("placements");
  const placementsHome = placements.parentNode;
  const state = { perspective: null, cursor: 0, showIds: false, timer: null };
  let events = [];
  let nodes = [];
  let headers = []; // [{node, first}] one round heading and the index of its first event
  // Timeline entries in document order, each with the index of the first event it needs.
  let items = [];
  let attached = 0; // items[0 .. attached-1] are in the document

  // Nothing past the current step is in the document: not hidden, absent. A perspective
  // must not be able to read ahead (the reveal, a later private line, the final table)
  // by inspecting the page, and a layout's marks cannot leak through hidden nodes.
  placements.remove();
  placements.hidden = false; // hidden in the page only for readers without JavaScript
  if (board) board.hidden = true;

  function rebuild() {
    events = eventsFor(data.events, state.perspective);
    nodes = [];
    headers = [];
    items = [];
    attached = 0;
    timeline.textContent = "";
    let round = null;
    events.forEach((ev, i) => {
      if (ev.round !== round) {
        round = ev.round;
        const h = el("li", "round-head", layout.roundTitle(round));
        h.dataset.round = String(round);
        headers.push({ node: h, first: i });
        items.push({ node: h, index: i });
      }
      const node = renderEvent(ev);
      nodes.push(node);
      items.push({ node, index: i });
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

  // Attach the entries up to the cursor and detach the rest, keeping document order.
  function attachUpTo(cursor) {
    let want = 0;
    while (want < items.length && items[want].index <= cursor) want++;
    while (attached > want) timeline.removeChild(items[--attached].node);
    while (attached < want) timeline.appendChild(items[attached++].node);
  }

  // What a layout may read: this perspective's events up to the cursor, and the whole
  // record only in the omniscient view (which knows every hidden fact from the start).
  function context() {
    return {
      perspective: state.perspective,
      omniscient: state.perspective === null,
      record: state.perspective === null ? data.events : null,
      seats: data.seats.map((s) => s.seat),
      title: data.title || data.game,
    };
  }

  // Seat cards: status and private hints as of the cursor, from the visible events only.
  function updateSeats(shown) {
    const status = {};
    const won = {};
    const gone = {};
    const hints = {};
    shown.forEach((ev) => {
      const kind = kindOf(ev);
      // A seat leaves the game: the vocabulary's elimination kind (or, for a game not
      // installed here, the conventional "eliminated" type).
      if ((kind ? kind.generic === "elimination" : ev.type === "eliminated")) {
        const seat = seatOf(ev);
        if (seat !== null) {
          status[seat] = ev.data.cause ? "eliminated (" + str(ev.data.cause) + ")" : "eliminated";
          gone[seat] = true;
        }
      }
      (Array.isArray(ev.data.winners) ? ev.data.winners : []).forEach((s) => {
        status[s] = ev.data.phase ? "won at identity guess #" + ev.data.phase : "won";
        won[s] = true;
        gone[s] = false;
      });
      // A private note to one seat ({seat, kind, value}) is pinned to that seat's card.
      if (ev.type === "hint" && ev.data.seat) {
        (hints[ev.data.seat] = hints[ev.data.seat] || []).push(str(ev.data.kind) + ": " + str(ev.data.value));
      }
    });
    // At the last step the result line is public knowledge: its winners win, and each
    // card says how its seat ended (the game's own phrase: "setter, won", "eliminated
    // (roulette)", "guesser"), as the final table does, never "in the game".
    const summary = data.result && data.result.summary;
    const atEnd = shown.length === events.length && Boolean(data.result);
    if (atEnd && summary && Array.isArray(summary.winners)) {
      summary.winners.forEach((s) => { won[s] = true; gone[s] = false; status[s] = status[s] || "won"; });
    }
    const ended = {};
    const place = {};
    if (atEnd) {
      (data.placements || []).forEach((p) => {
        if (p.outcome) ended[p.seat] = p.outcome;
        place[p.seat] = "place " + p.place;
      });
    }
    const own = typeof layout.seats === "function" ? layout.seats(shown, context()) || {} : {};
    document.querySelectorAll(".seat-card").forEach((card) => {
      const seat = Number(card.dataset.seat);
      const mine = own[seat] || {};
      const isWon = mine.won !== undefined ? Boolean(mine.won) : Boolean(won[seat]);
      const isGone = mine.gone !== undefined ? Boolean(mine.gone) : Boolean(gone[seat]);
      const still = mine.status === "in the game" ? "" : mine.status;
      card.querySelector(".seat-status").textContent =
        still || ended[seat] || status[seat] || place[seat] || "in the game";
      card.classList.toggle("won", isWon);
      card.classList.toggle("gone", isGone && !isWon);
      card.classList.toggle("me", state.perspective === seat);
      const tags = card.querySelector(".seat-tags");
      tags.textContent = "";
      (mine.tags || []).forEach((t) => tags.appendChild(typeof t === "string" ? tag(t) : tag(t.text, t.cls)));
      const ul = card.querySelector(".seat-hints");
      ul.textContent = "";
      (hints[seat] || []).forEach((h) => ul.appendChild(el("li", null, "hint · " + h)));
    });
  }

  // The layout's board (a card, a score sheet): redrawn from scratch at every step.
  function updateBoard(shown) {
    if (!board || typeof layout.board !== "function") return;
    board.textContent = "";
    const node = layout.board(shown, context());
    if (node) board.appendChild(node);
    board.hidden = !node;
    document.body.classList.toggle("has-board", Boolean(node));
  }

  function update() {
    const last = events.length - 1;
    state.cursor = Math.max(0, Math.min(state.cursor, last));
    attachUpTo(state.cursor);
    nodes.forEach((node, i) => node.classList.toggle("current", i === state.cursor));
    const current = nodes[state.cursor];
    if (current && typeof current.scrollIntoView === "function") current.scrollIntoView({ block: "nearest" });
    $("position").textContent = events.length ? "Step " + (state.cursor + 1) + " / " + events.length : "No steps";
    if (current) $("round").value = current.dataset.round;
    const atEnd = Boolean(events.length && state.cursor === last && data.result);
    if (atEnd && !placements.isConnected) {
      placementsHome.appendChild(placements);
      if (typeof placements.scrollIntoView === "function") placements.scrollIntoView({ block: "nearest" });
    } else if (!atEnd && placements.isConnected) {
      placements.remove();
    }
    $("first").disabled = $("prev").disabled = state.cursor <= 0;
    $("next").disabled = $("last").disabled = state.cursor >= last;
    const shown = events.slice(0, state.cursor + 1);
    updateSeats(shown);
    updateBoard(shown);
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
    // A page opened without a step shows the whole game (the last step), not its first
    // line; the controls step back from there.
    state.cursor = h.seq === null ? events.length - 1 : indexAtOrBefore(events, h.seq);
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

// The web seat's page: polls the seat's state, shows what the seat may see, and sends the
// decision form. Text from the game goes in only through textContent.
"use strict";
(function () {
  const base = location.pathname.replace(/[^/]*$/, "");
  const seatParam = new URLSearchParams(location.search).get("seat");
  const q = seatParam ? "?seat=" + encodeURIComponent(seatParam) : "";
  const $ = (id) => document.getElementById(id);
  let shownFeed = 0;
  let formKey = null;
  let form = null;
  let mySeat = null; // this page's seat: marked "(you)" wherever a player is chosen

  // Direction overrides and control characters (but tab and newline) shown as their
  // escapes, as core/exports.py does for our files: a player's text cannot turn the
  // page's text around.
  const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function inert(text) {
    return String(text).replace(UNSAFE, (c) => {
      const code = c.charCodeAt(0);
      return code <= 0xff ? "\\x" + code.toString(16).padStart(2, "0")
        : "\\u" + code.toString(16).padStart(4, "0");
    });
  }

  window.StillePostSeat = { inert }; // for the tests

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = inert(text);
    if (cls) e.className = cls;
    return e;
  }

  // A player to choose, as an <option>; this page's own seat says so, so that a vote for
  // yourself is never a slip.
  function seatOption(s) {
    const o = el("option", "Player " + s + (s === mySeat ? " (you)" : ""));
    o.value = String(s);
    if (s === mySeat) o.className = "you";
    return o;
  }

  function words(text) {
    const t = text.trim();
    return t ? t.split(/\s+/).length : 0;
  }

  function updateCount() {
    if (!form || form.seat_answer) { $("count").textContent = ""; return; }
    const n = words($("message").value);
    const limit = form.word_limit ? " of " + form.word_limit : "";
    $("count").textContent = n + (n === 1 ? " word" : " words") + limit;
    $("count").className = form.word_limit && n > form.word_limit ? "error" : "";
  }

  function showArguments() {
    const box = $("arguments");
    box.replaceChildren();
    const picked = document.querySelector("input[name=choice]:checked");
    const number = picked ? Number(picked.value) : (form.choices.length === 1 && form.tool_required ? form.choices[0].number : 0);
    const choice = form.choices.find((c) => c.number === number);
    if (!choice) return;
    for (const arg of choice.arguments) {
      const label = el("label", arg.name + (arg.description ? " (" + arg.description + ")" : ""));
      let input;
      if (arg.kind === "seat") {
        input = el("select");
        input.appendChild(el("option", "choose a player", ""));
        for (const s of form.seats) input.appendChild(seatOption(s));
      } else {
        input = el("input");
        input.type = "text";
        if (arg.kind === "seats") input.placeholder = "player numbers in order, e.g. " + form.seats.join(", ");
      }
      input.dataset.arg = arg.name;
      input.id = "arg-" + arg.name;
      label.htmlFor = input.id;
      box.append(label, input);
    }
  }

  function showForm(f) {
    form = f;
    $("waiting").hidden = true;
    $("form").hidden = false;
    $("instruction").textContent = inert(f.instruction);
    $("repair").hidden = !f.repair;
    $("repair").textContent = f.repair ? inert("The game asks again: " + f.repair) : "";
    $("error").textContent = "";
    const box = $("message-box");
    box.hidden = f.message === "none";
    const seatChoice = $("seat-choice");
    seatChoice.hidden = !f.seat_answer;
    $("message").hidden = f.seat_answer;
    $("message").value = "";
    seatChoice.replaceChildren(el("option", "choose a player", ""));
    for (const s of f.seats) seatChoice.appendChild(seatOption(s));
    $("message-label").textContent = f.seat_answer ? "Choose a player" :
      "Your answer" + (f.word_limit ? " (at most " + f.word_limit + " words)" : "") +
      (f.message === "optional" ? " (optional)" : "");
    const tools = $("tools");
    tools.replaceChildren();
    if (f.choices.length) {
      tools.appendChild(el("p", f.tool_required ? "Choose one:" : "Tools (optional):"));
      const options = f.tool_required ? [] : [{ number: 0, tool: null, description: "no tool" }];
      for (const c of options.concat(f.choices)) {
        const label = el("label");
        const input = el("input");
        input.type = "radio";
        input.name = "choice";
        input.value = String(c.number);
        input.id = "choice-" + c.number;
        if (c.number === 0 || (f.tool_required && c === f.choices[0])) input.checked = true;
        input.addEventListener("change", showArguments);
        label.append(input, document.createTextNode(" " + c.number + ". " + (c.tool ? c.tool + ": " : "") + c.description));
        tools.appendChild(label);
      }
    }
    showArguments();
    updateCount();
  }

  function hideForm() {
    form = null;
    $("form").hidden = true;
    $("waiting").hidden = false;
  }

  // One pending poll at a time: every half second, and every 100 ms for the few seconds
  // after an answer is taken, when the next question usually comes (bots answer in
  // milliseconds, so a person waits for the page, not for the game).
  let pollTimer = null;
  let eagerUntil = 0;
  function pollIn(ms) { clearTimeout(pollTimer); pollTimer = setTimeout(poll, ms); }

  async function poll() {
    let state;
    try {
      const r = await fetch(base + "api/state" + q, { cache: "no-store" });
      if (!r.ok) throw new Error(String(r.status));
      state = await r.json();
    } catch (e) {
      $("status").textContent = "the game has ended (the server is gone)";
      $("status").dataset.over = "1";
      hideForm();
      $("waiting").textContent = "The game has ended.";
      return;
    }
    mySeat = state.seat;
    $("title").textContent = "Player " + state.seat;
    $("rules").textContent = inert(state.rules);
    const feed = $("feed");
    for (const line of state.feed.slice(shownFeed)) {
      const cls = line.startsWith("[you]") ? "you" : (line.includes("→ you") || line.includes("(private)") ? "private" : "");
      feed.appendChild(el("li", line, cls));
    }
    if (state.feed.length > shownFeed) feed.lastElementChild.scrollIntoView({ block: "nearest" });
    shownFeed = state.feed.length;
    const key = state.form ? state.answered + ":" + JSON.stringify(state.form) : null;
    if (key !== formKey) {
      formKey = key;
      if (state.form) showForm(state.form); else hideForm();
    }
    $("status").textContent = state.over ? "game over" : (state.form ? "your turn" : "waiting");
    $("status").dataset.over = state.over ? "1" : "";
    const thinking = (state.thinking || []).map((s) => "Player " + s);
    $("waiting").textContent = state.over
      ? "The game is over: how it ended is at the end of the table."
      : thinking.length
        ? "Waiting for " + thinking.join(" and ") + "…"
        : "Waiting for the other players…";
    if (!state.over || state.form) pollIn(!state.form && Date.now() < eagerUntil ? 100 : 500);
  }

  async function send(ev) {
    ev.preventDefault();
    if (!form) return;
    const body = { text: form.seat_answer ? $("seat-choice").value : $("message").value, arguments: {} };
    const picked = document.querySelector("input[name=choice]:checked");
    if (picked) body.choice = picked.value;
    for (const input of document.querySelectorAll("[data-arg]")) body.arguments[input.dataset.arg] = input.value;
    $("send").disabled = true;
    try {
      const r = await fetch(base + "api/answer" + q, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      const reply = await r.json();
      if (reply.error) $("error").textContent = "Not accepted: " + reply.error + ". Please answer again.";
      else { $("error").textContent = ""; hideForm(); formKey = "sent"; eagerUntil = Date.now() + 3000; pollIn(20); }
    } catch (e) {
      $("error").textContent = "could not send: " + e;
    } finally {
      $("send").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("form").addEventListener("submit", send);
    $("message").addEventListener("input", updateCount);
    poll();
  });
})();

/* The Connections layout (docs/rules.md §4): the secret word as tiles. A guesser is told
 * letters only, never the length, so the public tiles are the revealed letters and one
 * open tile ("…") for the rest, unless the Game Master has said no letter is left; the
 * setter's own view and the final reveal show the whole word (unrevealed letters dimmed). Each
 * attempt's clue and simultaneous guesses, its outcome with the blocked and used lists,
 * and the end. viewer.js filters events by the chosen perspective, so a guesser's view
 * never receives the setter's private `secret` event or another seat's `clue_word`.
 * Transcript text goes in through textContent only (the kit helpers do that).
 */
(function (root) {
  "use strict";
  const layouts = (root.StillePostLayouts = root.StillePostLayouts || {});

  layouts["connections"] = function (kit) {
    const { el, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox } = kit;

    // Tiles: `word` is the whole secret (the setter's view, the final reveal) or null (a
    // public announcement: the revealed letters, then an open tile unless `complete`).
    function tiles(prefix, word, complete) {
      const box = el("div", "cx-tiles");
      box.style.display = "flex";
      box.style.gap = "3px";
      box.style.margin = "4px 0";
      const letters = word ? word.length : prefix.length + (complete ? 0 : 1);
      for (let i = 0; i < letters; i++) {
        const shown = i < prefix.length;
        const letter = shown ? prefix[i] : word ? word[i] : "…";
        const t = el("span", "cx-tile" + (shown ? " cx-shown" : " cx-hidden"), str(letter).toUpperCase());
        t.style.display = "inline-block";
        t.style.minWidth = "1.4em";
        t.style.textAlign = "center";
        t.style.border = "1px solid #888";
        t.style.borderRadius = "3px";
        t.style.fontFamily = "monospace";
        t.style.opacity = shown ? "1" : word ? "0.45" : "0.8";
        box.appendChild(t);
      }
      return box;
    }

    function list(label, words) {
      return el("p", "note", label + ": " + (words && words.length ? words.map(str).join(", ") : "none"));
    }

    const OUTCOME = { connection: "Connection", setter_blocked: "Setter Blocked", guesser_wrong: "Guesser Wrong" };

    return {
      roundTitle: (r) => (r === 0 ? "Set-up" : "Attempt " + r),
      types: {
        game_start: gmBox("start"),
        persona: gmBox("private"),
        personas: gmBox("start"),
        secret: (ev) => {
          const li = gmBox("private")(ev);
          const w = str(ev.data.word);
          li.appendChild(tiles(w.slice(0, 1), w, false));
          return li;
        },
        prefix: (ev) => {
          const li = gmBox("result")(ev);
          li.appendChild(tiles(str(ev.data.prefix), null, ev.data.complete === true));
          return li;
        },
        attempt_start: divider,
        clue_word: gmBox("private"),
        clue: (ev) => {
          const li = row("msg", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "clue"), h.children[1] || null);
          li.appendChild(h);
          li.appendChild(textBlock(str(ev.data.clue)));
          return li;
        },
        guess: (ev) => {
          const li = row("guess", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "guesses"), h.children[1] || null);
          li.appendChild(h);
          li.appendChild(el("code", "tool", str(ev.data.word)));
          return li;
        },
        scored: (ev) => {
          const li = row("phase", null);
          li.appendChild(head(ev, gmLabel()));
          const verdict = str(ev.data.outcome);
          li.appendChild(el("span", "verdict " + (verdict === "connection" ? "correct" : "wrong"),
            OUTCOME[verdict] || verdict));
          li.appendChild(textBlock(str(ev.data.text)));
          li.appendChild(list("Blocked", ev.data.blocked));
          li.appendChild(list("Used", ev.data.used));
          return li;
        },
        repair_request: gmBox("private"),
        invalid: gmBox("warn"),
        game_over: gmBox("end"),
        reveal: (ev) => {
          const li = gmBox("end")(ev);
          const w = str(ev.data.secret);
          if (w) li.appendChild(tiles(w, w, true));
          return li;
        },
      },
    };
  };
})(typeof window !== "undefined" ? window : globalThis);

/* The Stille Post layout (docs/rules.md §1): messages in seat colours, Game Master notices,
 * tool calls and results, hints, identity-guess phases, eliminations and wins.
 * Registers a factory that viewer.js calls with its building blocks (`kit`); like the
 * rest of the viewer it inserts transcript text only through textContent.
 */
(function (root) {
  "use strict";
  const layouts = (root.StillePostLayouts = root.StillePostLayouts || {});

  layouts["stille-post"] = function (kit) {
    const { el, seatClass, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox } = kit;

    function callText(call) {
      const args = call.arguments && typeof call.arguments === "object" ? call.arguments : {};
      const parts = Object.keys(args).map((k) => k + "=" + JSON.stringify(args[k]));
      return str(call.name) + "(" + parts.join(", ") + ")";
    }

    return {
      roundTitle: (r) => (r === 0 ? "Introduction round" : "Round " + r),
      types: {
        game_start: gmBox("start"),
        intro_prompt: divider,
        turn_start: divider,
        message: (ev) => {
          const li = row("msg", ev.actor);
          li.appendChild(head(ev, seatLabel(ev.actor)));
          li.appendChild(textBlock(str(ev.data.text)));
          if (ev.data.truncated_from) {
            li.appendChild(el("p", "note", "cut to the message cap (was " + ev.data.truncated_from + " characters)"));
          }
          if (ev.data.escaped_lines) {
            li.appendChild(el("p", "note", ev.data.escaped_lines + " forged header line(s) escaped"));
          }
          return li;
        },
        tool_calls: (ev) => {
          const li = row("call", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "calls"), h.children[1] || null);
          li.appendChild(h);
          (ev.data.tool_calls || []).forEach((c) => li.appendChild(el("code", "tool", callText(c))));
          return li;
        },
        tool_result: (ev) => {
          const li = gmBox("result")(ev);
          li.querySelector(".ev-head").appendChild(el("span", "chip", str(ev.data.tool)));
          return li;
        },
        tool_refused: gmBox("refused"),
        hint: (ev) => {
          const li = row("hint", ev.data.seat);
          li.appendChild(head(ev, gmLabel()));
          li.appendChild(el("p", "hint-value", "Hint for Player " + ev.data.seat + " — " +
            str(ev.data.kind) + ": " + str(ev.data.value)));
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        no_hints_left: gmBox("private"),
        repair_request: gmBox("private"),
        guess_invalid: gmBox("private"),
        forfeit: gmBox("warn"),
        identity_guess_start: (ev) => {
          const li = row("phase", null);
          li.appendChild(el("span", "phase-title", "Identity guess #" + ev.data.phase));
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        identity_guess: (ev) => {
          const li = row("guess", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "guesses its own model"), h.children[1] || null);
          li.appendChild(h);
          li.appendChild(el("code", "tool", str(ev.data.text)));
          const verdict = !ev.data.valid ? "invalid" : ev.data.correct ? "correct" : "wrong";
          li.appendChild(el("span", "verdict " + verdict, verdict));
          return li;
        },
        identity_result: (ev) => {
          const li = gmBox("result")(ev);
          (ev.data.winners || []).forEach((s) => {
            const p = el("p", "win");
            p.appendChild(el("span", "badge win-badge", "WIN"));
            p.appendChild(seatLabel(s));
            p.appendChild(document.createTextNode(" wins: it named its own model"));
            li.appendChild(p);
          });
          return li;
        },
        eliminated: (ev) => {
          const li = row("out", ev.data.seat);
          const p = el("p", "out-line");
          p.appendChild(el("span", "badge out-badge", "OUT"));
          p.appendChild(seatLabel(ev.data.seat));
          let why = " is eliminated (" + str(ev.data.cause);
          if (ev.data.by) why += ev.data.by === ev.data.seat ? ", by its own shot" : ", shot by Player " + ev.data.by;
          p.appendChild(document.createTextNode(why + ")"));
          li.appendChild(p);
          if (ev.data.text) li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        game_over: gmBox("end"),
        reveal: (ev) => {
          // The list says what the Game Master's sentence says, in the seats' colours.
          const li = row("gm end", null);
          li.appendChild(head(ev, gmLabel()));
          li.appendChild(el("p", "text", "Identities revealed:"));
          const ids = ev.data.identities || {};
          const ul = el("ul", "reveal");
          Object.keys(ids).forEach((s) => {
            const item = el("li");
            item.appendChild(el("span", "who " + seatClass(Number(s)), "Player " + s));
            item.appendChild(document.createTextNode(" was " + str(ids[s])));
            ul.appendChild(item);
          });
          li.appendChild(ul);
          return li;
        },
      },
    };
  };
})(typeof window !== "undefined" ? window : globalThis);

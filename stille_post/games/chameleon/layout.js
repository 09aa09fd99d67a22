/* The Chameleon layout (docs/rules.md §3): the card as a grid, the clues side by side, the
 * vote tally, a tie and its rule, the accusation, the second-chance guess, the outcome.
 *
 * What a perspective may see is the rule this file is built around:
 * - the secret word is marked on the card only where it is known: the omniscient view,
 *   a non-chameleon's view from its own `role` event on, and every view after the
 *   public `reveal`. In the chameleon's view, before the reveal, the cells are built by
 *   one code path with no mark at all, so no class, attribute or style tells them apart;
 * - the chameleon is marked only in the omniscient view and after the `reveal`.
 * The board and the seat cards are drawn from `shown` (this view's events up to the
 * current step) and, in the omniscient view only, from `ctx.record`.
 *
 * Registers a factory that viewer.js calls with its building blocks (`kit`); transcript
 * text reaches the page only through textContent (kit.el and friends).
 */
(function (root) {
  "use strict";
  const layouts = (root.StillePostLayouts = root.StillePostLayouts || {});

  layouts["chameleon"] = function (kit) {
    const { el, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox, seatChip, tag, tally } = kit;

    const TIE_RULES = {
      random: "one of the tied players is picked at random",
      dealer: "the dealer picks one of the tied players",
      chameleon_wins: "nobody is accused and the chameleon goes free",
    };
    const OUTCOMES = {
      IdentifiedWin: "The other players win: the chameleon was caught and guessed wrong.",
      IdentifiedLoss: "The chameleon wins: caught, but it named the secret word.",
      MisidentifiedLoss: "The chameleon wins: the wrong player was accused.",
      Fail: "The game is void.",
    };

    const same = (a, b) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
    const players = (seats) => seats.map((s) => "Player " + s).join(" and ");

    // Everything the board needs, as far as this perspective knows it at this step.
    function facts(shown, ctx) {
      const f = {
        start: null, order: [], dealer: null, turn: null, words: {}, votes: [], result: null,
        tieRequest: null, tieBreak: null, accusation: null, secondChance: null, guess: null,
        over: null, reveal: null, ownRole: null,
        secret: null, chameleon: null, // known facts only; null where this view does not know
      };
      shown.forEach((ev) => {
        const d = ev.data;
        switch (ev.type) {
          case "game_start": f.start = d; break;
          case "speaking_order": f.order = Array.isArray(d.order) ? d.order : []; break;
          case "dealer": f.dealer = d.seat; break;
          case "turn_start": f.turn = ev.actor; break;
          case "word": f.words[ev.actor] = str(d.word); break;
          case "vote": f.votes.push({ voter: ev.actor, target: d.target }); break;
          case "vote_result": f.result = d; break;
          case "tie_break_request": f.tieRequest = d; break;
          case "tie_break": f.tieBreak = d; break;
          case "accusation": f.accusation = d; break;
          case "second_chance": f.secondChance = ev.actor; break;
          case "guess": f.guess = d; break;
          case "game_over": f.over = d; break;
          case "reveal": f.reveal = d; break;
          case "role":
            // A seat's view holds only its own role event; the omniscient view reads
            // every role from the record below instead.
            if (!ctx.omniscient) f.ownRole = d;
            if (typeof d.secret === "string") f.secret = d.secret;
            break;
          default: break;
        }
      });
      if (f.reveal) {
        f.secret = f.reveal.secret;
        f.chameleon = f.reveal.chameleon;
      }
      if (ctx.omniscient) {
        // The omniscient view knows the deal from the first step, as a spectator would.
        ctx.record.forEach((ev) => {
          if (ev.type === "role" && ev.data.role === "chameleon") f.chameleon = ev.data.seat;
          if (ev.type === "role" && typeof ev.data.secret === "string") f.secret = ev.data.secret;
          if (ev.type === "reveal") { f.secret = ev.data.secret; f.chameleon = ev.data.chameleon; }
          if (ev.type === "game_start" && !f.start) f.start = ev.data;
        });
      }
      return f;
    }

    function section(title) {
      const s = el("section", "board-section");
      s.appendChild(el("h3", "board-title", title));
      return s;
    }

    // One cell per card word. Without the secret (`known` false) every cell goes through
    // exactly the same lines; marks are added only when this view knows the secret.
    function cardGrid(words, f) {
      const known = typeof f.secret === "string";
      const grid = el("div", "word-grid");
      words.forEach((w) => {
        const cell = el("div", "word-cell");
        cell.appendChild(el("span", "cell-word", str(w)));
        if (known) {
          const notes = [];
          if (same(w, f.secret)) { cell.classList.add("marked"); notes.push("secret"); }
          if (f.guess && same(w, f.guess.word)) {
            cell.classList.add(f.guess.correct ? "hit" : "missed");
            notes.push(f.guess.correct ? "guessed ✓" : "guessed ✗");
          }
          if (notes.length) cell.appendChild(el("span", "cell-note", notes.join(" · ")));
        }
        grid.appendChild(cell);
      });
      return grid;
    }

    function cardSection(f, ctx) {
      const s = section("The card");
      if (!f.start) return s;
      const words = Array.isArray(f.start.words) ? f.start.words : [];
      s.appendChild(el("p", "board-line board-big", str(f.start.category)));
      let line = null;
      if (f.reveal) line = "Revealed: the secret word was " + str(f.secret) + ".";
      else if (ctx.omniscient && f.secret) line = "The secret word is " + f.secret + ".";
      else if (f.ownRole && f.ownRole.role === "chameleon") line = "You are the chameleon: you were not told the secret word.";
      else if (f.ownRole && f.secret) line = "You know the secret word: " + f.secret + ".";
      if (line) s.appendChild(el("p", "board-line", line));
      s.appendChild(cardGrid(words, f));
      return s;
    }

    function cluesSection(f) {
      const s = section("Clues");
      const chips = el("div", "chips");
      const order = f.order.length ? f.order : Object.keys(f.words).map(Number);
      order.forEach((seat) => {
        const said = Object.prototype.hasOwnProperty.call(f.words, seat);
        const chip = seatChip(seat, said ? f.words[seat] : seat === f.turn ? "…" : "—");
        if (!said) chip.classList.add("pending");
        if (f.chameleon === seat) chip.appendChild(tag("chameleon", "bad"));
        chips.appendChild(chip);
      });
      s.appendChild(chips);
      return s;
    }

    function voteSection(f) {
      const s = section("Vote");
      const counts = {};
      const voters = {};
      f.votes.forEach((v) => {
        counts[v.target] = (counts[v.target] || 0) + 1;
        (voters[v.target] = voters[v.target] || []).push("P" + v.voter);
      });
      const final = f.result && f.result.tally ? f.result.tally : counts;
      const notes = {};
      Object.keys(voters).forEach((t) => { notes[t] = "← " + voters[t].join(", "); });
      if (Object.keys(final).length) s.appendChild(tally(final, notes));
      else s.appendChild(el("p", "board-line pending", "waiting for the votes"));
      const rule = f.start ? str(f.start.tie_rule) : "";
      if (f.result && f.result.tie) {
        s.appendChild(el("p", "board-line", "Tie between " + players(f.result.top || []) + "."));
        s.appendChild(el("p", "board-line", "Tie rule " + rule + ": " + (TIE_RULES[rule] || rule) +
          (rule === "dealer" && f.dealer ? " (Player " + f.dealer + ")" : "") + "."));
      }
      if (f.tieBreak) {
        const picked = f.tieBreak.picked;
        s.appendChild(el("p", "board-line board-big", picked === null || picked === undefined
          ? "Nobody is accused." : "→ Player " + picked + " is accused."));
      }
      return s;
    }

    function verdictSection(f) {
      const s = section("Verdict");
      const a = f.accusation;
      if (a && a.seat !== null && a.seat !== undefined) {
        const p = el("p", "board-line");
        p.appendChild(seatChip(a.seat, "accused"));
        p.appendChild(document.createTextNode(a.chameleon_caught ? " is the chameleon." : " is not the chameleon."));
        s.appendChild(p);
      }
      if (f.secondChance !== null && !f.guess) {
        s.appendChild(el("p", "board-line", "Player " + f.secondChance + " has one guess at the secret word…"));
      }
      if (f.guess) {
        const p = el("p", "board-line");
        p.appendChild(document.createTextNode("Second chance: guessed "));
        p.appendChild(el("strong", null, str(f.guess.word)));
        p.appendChild(document.createTextNode(" "));
        p.appendChild(el("span", "verdict " + (f.guess.correct ? "correct" : "wrong"), f.guess.correct ? "correct" : "wrong"));
        s.appendChild(p);
      }
      if (f.over) s.appendChild(el("p", "board-line board-big", outcomeText(f)));
      return s;
    }

    function outcomeText(f) {
      const o = f.over.outcome;
      if (o === "Fail") return str(f.over.text); // says why the game is void
      const nobody = f.accusation && (f.accusation.seat === null || f.accusation.seat === undefined);
      if (o === "MisidentifiedLoss" && nobody) return "The chameleon wins: nobody was accused.";
      return OUTCOMES[o] || str(f.over.text);
    }

    // Who won, once the outcome and the chameleon are both known to this view.
    function winners(f, ctx) {
      if (!f.over || f.chameleon === null) return null;
      const caught = f.over.outcome === "IdentifiedWin";
      if (f.over.outcome === "Fail") return [];
      return ctx.seats.filter((s) => (s === f.chameleon) !== caught);
    }

    // "[Player X] says koala" on one line: a clue is one word, a card per clue would be
    // mostly empty.
    function wordRow(ev) {
      const li = row("msg clue", ev.actor);
      const h = head(ev, seatLabel(ev.actor));
      h.insertBefore(el("span", "verb", "says"), h.children[1] || null);
      h.insertBefore(el("span", "text-big", str(ev.data.word)), h.children[2] || null);
      li.appendChild(h);
      if (ev.data.raw) li.appendChild(el("p", "note", "the reply read: " + str(ev.data.raw)));
      return li;
    }

    return {
      roundTitle: (r) => (r === 0 ? "The deal" : "Clues, vote and verdict"),

      board(shown, ctx) {
        const f = facts(shown, ctx);
        if (!f.start) return null;
        const node = el("div", "board-body");
        node.appendChild(cardSection(f, ctx));
        if (f.order.length || Object.keys(f.words).length) node.appendChild(cluesSection(f));
        if (f.votes.length || f.result) node.appendChild(voteSection(f));
        if (f.accusation || f.over) node.appendChild(verdictSection(f));
        return node;
      },

      seats(shown, ctx) {
        const f = facts(shown, ctx);
        const won = winners(f, ctx);
        const out = {};
        ctx.seats.forEach((seat) => {
          const tags = [];
          if (f.chameleon === seat) tags.push({ text: "chameleon", cls: "bad" });
          if (f.dealer === seat) tags.push({ text: "dealer" });
          if (f.accusation && f.accusation.seat === seat) tags.push({ text: "accused" });
          let status = Object.prototype.hasOwnProperty.call(f.words, seat) ? "said “" + f.words[seat] + "”" : "in the game";
          if (won) status = won.indexOf(seat) !== -1 ? "won" : won.length ? "lost" : "void game";
          out[seat] = { status, won: Boolean(won && won.indexOf(seat) !== -1), gone: false, tags };
        });
        return out;
      },

      types: {
        game_start: (ev) => {
          const d = ev.data;
          const li = row("gm start", null);
          li.appendChild(head(ev, gmLabel()));
          const words = Array.isArray(d.words) ? d.words.length : 0;
          li.appendChild(textBlock("The game begins with Players 1 to " + str(d.num_players) + ". Category: " +
            str(d.category) + ". The card has " + words + " words (on the board)."));
          li.appendChild(el("p", "note", "Ties: " + (TIE_RULES[d.tie_rule] || str(d.tie_rule)) + "."));
          return li;
        },
        role: gmBox("private"),
        dealer: gmBox("notice"),
        speaking_order: (ev) => {
          const li = row("gm notice", null);
          li.appendChild(head(ev, gmLabel()));
          const chips = el("div", "chips");
          (ev.data.order || []).forEach((s, i) => chips.appendChild(seatChip(s, String(i + 1))));
          li.appendChild(el("p", "text", "Speaking order:"));
          li.appendChild(chips);
          return li;
        },
        turn_start: (ev) => {
          const li = row("divider", null);
          li.appendChild(el("span", null, "Turn " + ev.turn + " · Player " + str(ev.actor)));
          return li;
        },
        word: wordRow,
        repair_request: gmBox("private"),
        invalid: gmBox("warn"),
        vote_start: divider,
        vote: (ev) => {
          const li = row("msg", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.appendChild(el("span", "verb", "votes for"));
          h.appendChild(seatChip(ev.data.target));
          li.appendChild(h);
          return li;
        },
        vote_result: (ev) => {
          const li = row("gm result", null);
          li.appendChild(head(ev, gmLabel()));
          li.appendChild(textBlock(ev.data.tie ? "The vote is tied between " + players(ev.data.top || []) + "."
            : "Player " + str((ev.data.top || [])[0]) + " has the most votes."));
          li.appendChild(tally(ev.data.tally || {}));
          return li;
        },
        tie_break_request: gmBox("notice"),
        tie_break: (ev) => {
          const li = gmBox("result")(ev);
          li.querySelector(".ev-head").appendChild(el("span", "chip", "tie rule: " + str(ev.data.rule)));
          return li;
        },
        accusation: (ev) => {
          const d = ev.data;
          const accused = d.seat !== null && d.seat !== undefined;
          const li = row(accused && d.chameleon_caught ? "gm result" : "out", accused ? d.seat : null);
          li.appendChild(head(ev, gmLabel()));
          const p = el("p", "out-line");
          if (accused) {
            p.appendChild(el("span", "badge " + (d.chameleon_caught ? "win-badge" : "out-badge"), "ACCUSED"));
            p.appendChild(seatLabel(d.seat));
            p.appendChild(document.createTextNode(d.chameleon_caught ? " is the chameleon." : " is not the chameleon."));
          } else {
            p.appendChild(el("span", "badge out-badge", "NOBODY ACCUSED"));
            p.appendChild(document.createTextNode("The chameleon escapes."));
          }
          li.appendChild(p);
          return li;
        },
        second_chance: (ev) => {
          const li = row("phase", null);
          li.appendChild(el("span", "phase-title", "Second chance"));
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        guess: (ev) => {
          const li = row("guess", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "guesses the secret word:"), h.children[1] || null);
          h.insertBefore(el("span", "text-big", str(ev.data.word)), h.children[2] || null);
          const verdict = ev.data.correct ? "correct" : "wrong";
          h.insertBefore(el("span", "verdict " + verdict, verdict), h.children[3] || null);
          li.appendChild(h);
          return li;
        },
        game_over: (ev) => {
          const li = row("gm end", null);
          const h = head(ev, gmLabel());
          h.appendChild(el("span", "chip", str(ev.data.outcome)));
          li.appendChild(h);
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        reveal: (ev) => {
          const li = row("gm end", null);
          li.appendChild(head(ev, gmLabel()));
          const p = el("p", "text");
          p.appendChild(seatLabel(ev.data.chameleon));
          p.appendChild(document.createTextNode(" was the chameleon. The secret word was "));
          p.appendChild(el("strong", null, str(ev.data.secret)));
          p.appendChild(document.createTextNode("."));
          li.appendChild(p);
          return li;
        },
      },
    };
  };
})(typeof window !== "undefined" ? window : globalThis);

/* The Elimination Game layout (docs/rules.md §2): the public subround, the pairing drawn as
 * who chats with whom, the private chats (viewer.js shows them only in the pair's
 * perspectives and the omniscient one), the votes with their tally, the tie chain, the
 * final and the jury, and a seat list at each round start and at the end (eliminations,
 * ranks). Transcript text goes in only through textContent (the kit helpers).
 */
(function (root) {
  "use strict";
  const layouts = (root.StillePostLayouts = root.StillePostLayouts || {});

  layouts["elimination"] = function (kit) {
    const { el, seatClass, str, seatLabel, gmLabel, textBlock, row, divider, head, gmBox } = kit;

    function seatChip(s) {
      return el("span", "who " + seatClass(Number(s)), "P" + s);
    }

    function marks(li, d) {
      const notes = [];
      if (d.limit_words !== undefined) notes.push((d.words || 0) + "/" + d.limit_words + " words");
      if (d.truncated_from_words) notes.push("cut at the limit (was " + d.truncated_from_words + " words)");
      if (d.truncated_from) notes.push("cut to the character cap (was " + d.truncated_from + ")");
      if (d.escaped_lines) notes.push(d.escaped_lines + " forged header line(s) escaped");
      if (d.reasked) notes.push("re-asked for length");
      if (d.empty) notes.push("said nothing" + (d.failure ? " (" + str(d.failure) + ")" : ""));
      if (notes.length) li.appendChild(el("p", "note", notes.join(" · ")));
    }

    function speech(label) {
      return (ev) => {
        const li = row("msg", ev.actor);
        const h = head(ev, seatLabel(ev.actor));
        if (label) h.insertBefore(el("span", "verb", label(ev)), h.children[1] || null);
        li.appendChild(h);
        li.appendChild(textBlock(str(ev.data.text)));
        marks(li, ev.data);
        return li;
      };
    }

    // A seat list: who is in, who is out (with the rank that elimination fixed).
    const ranks = {};
    function seatList(title, active, eliminated, finalRanks) {
      const li = row("gm seats", null);
      li.appendChild(el("p", "text", title));
      const ul = el("div", "seat-list");
      const all = (active || []).concat(eliminated || []).map(Number).sort((a, b) => a - b);
      all.forEach((s) => {
        const item = el("p", "text");
        item.appendChild(seatLabel(s));
        const r = finalRanks ? finalRanks[String(s)] : ranks[s];
        const out = (eliminated || []).map(Number).indexOf(s) >= 0;
        let status = out ? " — out" : " — in";
        if (r !== undefined && (out || finalRanks)) status += " (rank " + r + ")";
        item.appendChild(document.createTextNode(status));
        if (out) item.classList.add("out");
        ul.appendChild(item);
      });
      li.appendChild(ul);
      return li;
    }

    // One line per seat ("P4 ███ 3"): plain paragraphs, so no list styling applies.
    function tally(counts) {
      const box = el("div", "tally");
      Object.keys(counts || {})
        .sort((a, b) => counts[b] - counts[a] || Number(a) - Number(b))
        .forEach((s) => {
          const line = el("p", "text");
          line.appendChild(seatChip(s));
          line.appendChild(document.createTextNode(" " + "█".repeat(Math.min(Number(counts[s]) || 0, 40)) + " " + counts[s]));
          box.appendChild(line);
        });
      return box;
    }

    return {
      roundTitle: (r) => (r === 0 ? "Setup" : "Round " + r),
      types: {
        game_start: gmBox("start"),
        round_start: (ev) => seatList(str(ev.data.text), ev.data.active, ev.data.eliminated, null),
        phase: (ev) => {
          const li = row("phase", null);
          li.appendChild(el("span", "phase-title", str(ev.data.phase).replace("_", " ")));
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        speaking_order: divider,
        public_message: speech(null),
        tie_break_message: speech(() => "tie-break statement"),
        final_message: speech(() => "final statement"),
        private_message: speech((ev) => "to Player " + ev.data.to + " · private " + ev.data.subround),
        ranking: (ev) => {
          const li = row("private", ev.actor);
          li.appendChild(head(ev, seatLabel(ev.actor)));
          const p = el("p", "text", "ranks: ");
          (ev.data.ranking || []).forEach((s, i) => {
            if (i) p.appendChild(document.createTextNode(" › "));
            p.appendChild(seatChip(s));
          });
          li.appendChild(p);
          if ((ev.data.filled || []).length) {
            li.appendChild(el("p", "note", "appended at random: " + ev.data.filled.map((s) => "P" + s).join(", ")));
          }
          if ((ev.data.dropped || []).length) {
            li.appendChild(el("p", "note", "dropped: " + ev.data.dropped.map(str).join(", ")));
          }
          return li;
        },
        pairing_trace: (ev) => {
          const li = row("gm trace", null);
          li.appendChild(head(ev, gmLabel()));
          li.appendChild(el("p", "note", "entry order: " + (ev.data.entry_order || []).map((s) => "P" + s).join(", ")));
          const ol = el("ol", "steps");
          (ev.data.steps || []).forEach((s) => {
            let t = "P" + s.proposer + " → P" + s.receiver + ": " + str(s.result);
            if (s.displaced) t += " (P" + s.displaced + " displaced)";
            ol.appendChild(el("li", null, t));
          });
          li.appendChild(ol);
          return li;
        },
        pairing: (ev) => {
          const li = row("gm pairing", null);
          li.appendChild(head(ev, gmLabel()));
          const ul = el("div", "pairs");
          (ev.data.pairs || []).forEach((p) => {
            const item = el("p", "text");
            item.appendChild(seatChip(p[0]));
            item.appendChild(el("span", "link", " ⇄ "));
            item.appendChild(seatChip(p[1]));
            ul.appendChild(item);
          });
          (ev.data.unpaired || []).forEach((s) => {
            const item = el("p", "text unpaired");
            item.appendChild(seatChip(s));
            item.appendChild(document.createTextNode(" not paired"));
            ul.appendChild(item);
          });
          li.appendChild(ul);
          return li;
        },
        vote: (ev) => {
          const li = row("vote", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          const what = { vote: "votes out", revote: "re-votes out", jury: "jury: eliminate" }[ev.data.stage] || "votes";
          h.insertBefore(el("span", "verb", what), h.children[1] || null);
          li.appendChild(h);
          const p = el("p", "text");
          p.appendChild(ev.data.target === null || ev.data.target === undefined ? el("span", null, "no vote") : seatChip(ev.data.target));
          if (!ev.data.valid) p.appendChild(el("span", "verdict invalid", " not counted: " + str(ev.data.invalid)));
          li.appendChild(p);
          return li;
        },
        vote_reason: (ev) => {
          const li = row("reason", ev.actor);
          const h = head(ev, seatLabel(ev.actor));
          h.insertBefore(el("span", "verb", "reason"), h.children[1] || null);
          li.appendChild(h);
          li.appendChild(textBlock(str(ev.data.reason)));
          return li;
        },
        vote_result: (ev) => {
          const li = gmBox("result")(ev);
          li.appendChild(tally(ev.data.counts));
          return li;
        },
        tie: gmBox("warn"),
        tie_break: (ev) => {
          const li = gmBox("warn")(ev);
          li.querySelector(".ev-head").appendChild(el("span", "chip", "tie chain: " + str(ev.data.step)));
          if (ev.data.counts) li.appendChild(tally(ev.data.counts));
          return li;
        },
        elimination: (ev) => {
          ranks[ev.data.seat] = ev.data.rank;
          const li = row("out", ev.data.seat);
          const p = el("p", "out-line");
          p.appendChild(el("span", "badge out-badge", "OUT"));
          p.appendChild(seatLabel(ev.data.seat));
          p.appendChild(document.createTextNode(" — rank " + ev.data.rank));
          li.appendChild(p);
          li.appendChild(textBlock(str(ev.data.text)));
          return li;
        },
        repair_request: gmBox("private"),
        game_over: gmBox("end"),
        reveal: (ev) => {
          const r = ev.data.ranks || {};
          const seats = Object.keys(r);
          return seatList(str(ev.data.text), seats.filter((s) => r[s] === 1), seats.filter((s) => r[s] !== 1), r);
        },
      },
    };
  };
})(typeof window !== "undefined" ? window : globalThis);

"""The Chameleon layout in headless Chromium: the card grid, who may see the secret word
marked, who may see the chameleon marked, and the round drawn as a user reads it.

The secret-word check compares the secret word's cell with other cells of the card on
everything a browser can tell apart: class, attributes, computed style (the element's
own, ::before and ::after) and the same for every descendant, plus the cell's box. A
test further down plants marks of each kind into the layout and checks the check sees
them, so it cannot silently go blind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from stille_post.games.kit.definition import GameDefinition
from tests.slowparams import fast_only

from .helpers import Page, render

pytestmark = [
    pytest.mark.browser,
    pytest.mark.heavy,  # seconds in all: handed out first (conftest.py)
    pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"]),
]

# Properties that follow from the word's own length (a longer word, a wider span), not
# from any mark; the cells' own boxes are compared separately.
_SIZE = ["width", "height", "inline-size", "block-size", "perspective-origin", "transform-origin"]

# Runs in the page: the cells of the card, each with a signature of everything but its
# word; compared in the browser, so a step costs one round trip, not megabytes of styles.
CELL_SIGNATURES = """
const size = new Set(arguments[0]);
const secret = arguments[1];
function style(node, pseudo) {
  const cs = getComputedStyle(node, pseudo);
  return [...cs].filter((p) => !size.has(p)).map((p) => p + ":" + cs.getPropertyValue(p)).join(";");
}
function sig(node) {
  return {
    tag: node.tagName,
    cls: node.className,
    attrs: [...node.attributes].filter((a) => a.name !== "class")
      .map((a) => a.name + "=" + a.value).sort(),
    style: style(node, null), before: style(node, "::before"), after: style(node, "::after"),
    kids: [...node.children].map(sig),
  };
}
const cells = [...document.querySelectorAll("#board .word-cell")].map((cell) => {
  const word = cell.querySelector(".cell-word");
  return {node: cell, text: cell.textContent, word: (word || cell).textContent};
});
function full(c) {
  const box = c.node.getBoundingClientRect();
  c.box = [Math.round(box.width), Math.round(box.height)];
  c.sig = JSON.stringify(sig(c.node));
  return c;
}
const mine = cells.find((c) => secret !== null && c.word.toLowerCase() === secret.toLowerCase());
const problems = [];
if (mine) {
  // A mark on one cell sets it apart from any unmarked one: two others are enough, and
  // a full computed style per cell is the slow part of this check.
  const others = cells.filter((c) => c !== mine).slice(0, 2).map(full);
  full(mine);
  if (others.some((c) => c.sig !== mine.sig)) problems.push("class, attributes or computed style");
  if (others.some((c) => c.box.join() !== mine.box.join())) {
    problems.push("box " + mine.box + " vs " + others[0].box);
  }
  if (mine.text !== mine.word) problems.push("a note inside the cell");
}
return {cells: cells.map((c) => ({word: c.word, text: c.text})), found: Boolean(mine), problems};
"""

# Every attribute of every element in the document, lower-cased (name=value).
ALL_ATTRIBUTES = """
return [...document.querySelectorAll("*")].flatMap((n) =>
  [...n.attributes].map((a) => (a.name + "=" + a.value).toLowerCase()));
"""

# The document's text without the inline script's source.
PAGE_TEXT = """
const body = document.body.cloneNode(true);
body.querySelectorAll("script, style").forEach((n) => n.remove());
return body.textContent;
"""


def facts(path: Path) -> dict[str, Any]:
    t = Transcript.load(path)
    start = next(e for e in t.events if e.type == "game_start")
    reveal = next(e for e in t.events if e.type == "reveal")
    said = {str(e.data.get("word", "")).casefold() for e in t.events if e.type in ("word", "guess")}
    return {"transcript": t, "words": list(start.data["words"]), "reveal": reveal.seq,
            "secret": reveal.data["secret"], "chameleon": reveal.data["chameleon"], "said": said}


def cells(page: Page) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = page.js(CELL_SIGNATURES, _SIZE, None)["cells"]
    return result


def secret_cell_differs(page: Page, secret: str) -> list[str]:
    """What tells the secret word's cell apart from the others (empty: nothing)."""
    result = page.js(CELL_SIGNATURES, _SIZE, secret)
    assert result["cells"], "no card on the board"
    assert result["found"], f"{secret!r} is not on the card"
    problems: list[str] = result["problems"]
    return problems


def texts(page: Page, selector: str) -> list[str]:
    return [str(t) for t in page.js(
        "return [...document.querySelectorAll(arguments[0])].map((n) => n.textContent)", selector)]


# The Next button pressed in the page until the current event is `seq` or later: one
# WebDriver round trip instead of two per press (test_viewer_browser.py presses the
# button through WebDriver, as a user would, in test_step_forward_and_back).
STEP_TO = """
const current = () => +document.querySelector("#timeline .ev.current").dataset.seq;
const next = document.getElementById("next");
for (let presses = 0; current() < arguments[0] && presses < 10000; presses++) next.click();
return current();
"""


def _function(body: str) -> str:
    """A snippet written for `execute_script` (its own `arguments`, a `return`) as a JS
    function literal: no eval, which the page's Content-Security-Policy forbids."""
    return "function () {\n" + body + "\n}"


# The checks of one step in one round trip: press Next up to `seq`, then the secret cell's
# signature, every attribute and the page's text.
STEP_AND_LOOK = f"""
const stepTo = {_function(STEP_TO)};
const cellsOf = {_function(CELL_SIGNATURES)};
const attributesOf = {_function(ALL_ATTRIBUTES)};
const textOf = {_function(PAGE_TEXT)};
return {{current: stepTo(arguments[0]), cells: cellsOf(arguments[1], arguments[2]),
         attributes: attributesOf(), text: textOf()}};
"""


def step_to(page: Page, seq: int) -> None:
    """Step forward with the Next button until the current event is `seq` or later."""
    assert page.js(STEP_TO, seq) >= seq


def chameleon_marks(page: Page) -> list[str]:
    return [str(t) for t in page.js(
        "return [...document.querySelectorAll('.tag')]"
        ".filter((t) => /chameleon/i.test(t.textContent))"
        ".map((t) => (t.closest('[data-seat]') || t.parentNode).textContent)")]


# --- the card ----------------------------------------------------------------------------

def test_the_card_is_a_grid_of_its_words(browser: Any, chameleon_seed3: Path) -> None:
    f = facts(chameleon_seed3)
    page = Page(browser, render(chameleon_seed3))
    assert [c["word"] for c in cells(page)] == f["words"]
    grid = page.js("const g = document.querySelector('#board .word-grid');"
                   "return getComputedStyle(g).display + ' ' + "
                   "getComputedStyle(g).gridTemplateColumns.split(' ').length")
    assert grid == "grid 4"
    # The timeline does not repeat the card's words: it points at the board.
    assert f["words"][0] not in page.by_id("timeline").text
    assert page.errors() == []


# The tie game: a dealer, a re-ask, a wrong guess. Seed 3 (the default bots): the
# chameleon is caught and guesses wrong, so the secret word is never said before the
# reveal, and the page must show it exactly as often as a word nobody said.
@pytest.mark.parametrize("game", fast_only(["chameleon_tie", "chameleon_seed3"],
                                           {"chameleon_seed3"}))
def test_chameleon_view_never_marks_the_secret_before_the_reveal(
        browser: Any, game: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(game)
    f = facts(path)
    seat = f["chameleon"]
    page = Page(browser, render(path), f"#view={seat}&seq=1")
    view = [e.seq for e in f["transcript"].view(seat)]
    before = [s for s in view if s < f["reveal"]]
    # A card word nobody said, and no part of another card word ("apple" is in "pineapple").
    control = [w for w in f["words"] if w.casefold() not in f["said"] and w != f["secret"]
               and not any(w.casefold() in o.casefold() for o in f["words"] if o != w)]
    checked = 0
    for seq in before:  # every step this seat saw before the reveal
        look = page.js(STEP_AND_LOOK, seq, _SIZE, f["secret"])  # one round trip a step
        assert look["current"] == seq
        assert look["cells"]["cells"] and look["cells"]["found"], f"step seq={seq}"
        assert look["cells"]["problems"] == [], f"step seq={seq}"
        attributes = look["attributes"]
        assert not [a for a in attributes if f["secret"].casefold() in a or "secret" in a], seq
        if f["secret"].casefold() not in f["said"]:
            text = look["text"].casefold()
            # The secret word is on the page exactly as often as a card word nobody said.
            assert text.count(f["secret"].casefold()) == text.count(control[0].casefold()) == 1
        checked += 1
    assert checked >= 13, checked  # the deal, the clues, the vote, the verdict, the guess
    step_to(page, f["reveal"])
    # From the public reveal on, the chameleon sees the secret word marked too.
    assert secret_cell_differs(page, f["secret"]) != []
    assert page.errors() == []


@pytest.mark.parametrize("plant", fast_only([
    'cell.classList.add("x")',
    'cell.setAttribute("aria-current", "true")',
    'cell.style.letterSpacing = "0.01px"',
    'cell.appendChild(el("span", "cell-note"))',
], {'cell.classList.add("x")', 'cell.style.letterSpacing = "0.01px"'}))
def test_the_secret_check_sees_a_planted_mark(
        browser: Any, chameleon_tie: Path, plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout bug of each kind (class, attribute, style, extra node) on the secret
    word's cell in the chameleon's view is caught by the check above."""
    f = facts(chameleon_tie)
    original = GameDefinition.layout_source
    anchor = 'const cell = el("div", "word-cell");'

    def planted(self: GameDefinition) -> str | None:
        source = original(self)
        assert source is not None and anchor in source
        bug = f"{anchor} if (same(w, {json.dumps(f['secret'])})) {{ {plant}; }}"
        return source.replace(anchor, bug)

    monkeypatch.setattr(GameDefinition, "layout_source", planted)
    page = Page(browser, render(chameleon_tie), f"#view={f['chameleon']}&seq=1")
    assert secret_cell_differs(page, f["secret"]) != []


def test_a_non_chameleon_sees_the_secret_marked(browser: Any, chameleon_tie: Path) -> None:
    f = facts(chameleon_tie)
    seat = next(s for s in sorted(f["transcript"].seats) if s != f["chameleon"])
    role = next(e.seq for e in f["transcript"].view(seat) if e.type == "role")
    page = Page(browser, render(chameleon_tie), f"#view={seat}&seq=1")
    assert secret_cell_differs(page, f["secret"]) == []  # the deal: not told yet
    step_to(page, role)
    assert secret_cell_differs(page, f["secret"]) != []
    marked = page.js("return [...document.querySelectorAll('#board .word-cell.marked')]"
                     ".map((c) => c.querySelector('.cell-word').textContent)")
    assert marked == [f["secret"]]
    # ... but not who the chameleon is, until the reveal.
    step_to(page, f["reveal"] - 1)
    assert chameleon_marks(page) == []
    step_to(page, f["reveal"])
    marks = chameleon_marks(page)
    assert marks and all(f"Player {f['chameleon']}" in m for m in marks)


def test_omniscient_marks_the_chameleon_and_the_secret_from_the_start(
        browser: Any, chameleon_tie: Path) -> None:
    f = facts(chameleon_tie)
    page = Page(browser, render(chameleon_tie), "#view=all&seq=1")
    marks = chameleon_marks(page)
    assert marks and all(f"Player {f['chameleon']}" in m for m in marks)
    card = browser.find_element("css selector", f'.seat-card[data-seat="{f["chameleon"]}"]')
    assert "CHAMELEON" in card.text.upper()
    assert secret_cell_differs(page, f["secret"]) != []


def test_the_round_reads_as_a_user_expects(browser: Any, chameleon_tie: Path) -> None:
    f = facts(chameleon_tie)
    t = f["transcript"]
    page = Page(browser, render(chameleon_tie), "#view=all&seq=999999&ids=0")
    board = page.by_id("board").text
    clues = page.js("return [...document.querySelectorAll('#board .chips .seat-chip')]"
                    ".map((c) => c.querySelector('.seat-chip-text').textContent)")
    order = next(e.data["order"] for e in t.events if e.type == "speaking_order")
    words = {e.actor: e.data["word"] for e in t.events if e.type == "word"}
    assert clues == [words[s] for s in order]  # side by side, in speaking order
    assert "Tie between Player 1 and Player 2" in board
    assert "dealer" in board and "Player 2 is accused" in board
    assert "guessed apple" in board.replace("\n", " ") and "WRONG" in board.upper()
    assert "The other players win" in board
    rows = page.js("return [...document.querySelectorAll('#board .tally-row')]"
                   ".map((r) => r.textContent)")
    assert len(rows) == 2 and all("2" in r for r in rows)
    # Each clue is one line "Player X says WORD", not a card repeating it as a field.
    line = browser.find_element("css selector", '#timeline [data-type="word"]').text
    assert line.split("\n")[0].startswith("Player ") and " says " in line.replace("\n", " ")
    assert "word" not in line.split()
    # The guessed (wrong) cell and the secret cell are both marked after the reveal.
    notes = texts(page, "#board .cell-note")
    assert len(notes) == 2
    page.screenshot("chameleon-tie-final.png")
    chameleon_view = Page(browser, render(chameleon_tie), f"#view={f['chameleon']}&seq=20&ids=0")
    path = chameleon_view.screenshot("chameleon-tie-as-chameleon.png")
    assert path.stat().st_size > 10_000
    assert page.errors() == [] and chameleon_view.errors() == []


@pytest.mark.parametrize(("rule", "expected"), [
    ("chameleon_wins", ["nobody is accused and the chameleon goes free",
                        "The chameleon wins: nobody was accused."]),
    pytest.param("random", ["one of the tied players is picked at random", "is accused."],
                 marks=pytest.mark.slow),
])
def test_each_tie_rule_is_spelled_out(browser: Any, viewer_tmp: Path, rule: str,
                                      expected: list[str]) -> None:
    from .conftest import play_tie

    path = play_tie(viewer_tmp, rule)
    page = Page(browser, render(path), "#view=all&seq=999999")
    board = page.by_id("board").text.replace("\n", " ")
    assert "Tie between Player 1 and Player 2." in board
    assert all(e in board for e in expected), board
    assert page.errors() == []


def test_a_void_game_says_why(browser: Any, viewer_tmp: Path) -> None:
    from .helpers import run_cli

    bad = viewer_tmp / "bad-seat.yaml"
    bad.write_text('- "two words"\n- "still two words"\n', encoding="utf-8")
    out = viewer_tmp / "void.jsonl"
    proc = run_cli("play", "chameleon", "--seed", "3", "--players",
                   f"heuristic,heuristic,script:{bad},heuristic", "--quiet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    page = Page(browser, render(out), "#view=all&seq=999999")
    assert "the game is void" in page.by_id("board").text
    assert "void game" in page.by_id("seats").text
    assert page.errors() == []

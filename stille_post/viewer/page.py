"""Render a transcript into one self-contained HTML file (CSS, JS and data inlined).

Safety has two layers. The data is embedded as escaped JSON and the script inserts
model text only through `textContent`. On top of that, a Content-Security-Policy allows
exactly our own inline script and style (by hash) and no network at all, so even a
mistake in escaping could neither run a planted script nor fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import os
import warnings
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from stille_post.core.exports import html_finalize
from stille_post.core.transcript import Transcript
from stille_post.viewer.data import script_json, view_data

_PACKAGE = "stille_post.viewer"


def _asset(*parts: str) -> str:
    text = resources.files(_PACKAGE).joinpath("static", *parts).read_text(encoding="utf-8")
    # An end tag inside our own asset would cut the inline block short.
    tag = "</style" if parts[-1].endswith(".css") else "</script"
    if tag in text.lower():
        raise RuntimeError(f"viewer asset {'/'.join(parts)} contains {tag!r}; cannot inline it")
    return text


def _layout(game: str) -> str | None:
    """The game's own viewer layout (a JS file in its folder, declared by its definition),
    or None for a game without one (or one not installed here): the generic view."""
    from stille_post.games import all_games

    definition = all_games().get(game)
    if definition is None:
        return None
    try:
        source = definition.layout_source()
    except FileNotFoundError:
        # A declared layout that is not there (a game still being written, a broken
        # install): the replay is still worth having, so it falls back to the generic
        # view and says why once.
        warnings.warn(f"the {game} layout {definition.layout!r} is missing; "
                      "using the generic view", stacklevel=2)
        source = None
    if source is not None and "</script" in source.lower():
        raise RuntimeError(f"the {game} layout contains '</script'; cannot inline it")
    return source


def _script(game: str) -> str:
    """The game's layout, then the core that picks it: a single inline script, so the
    CSP names a single hash."""
    layout = _layout(game)
    return "\n".join([*([layout] if layout else []), _asset("viewer.js")])


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, "templates"),
        autoescape=True,  # everything from the transcript is text, never markup
        finalize=html_finalize,  # ...and inert: no direction override, no control character
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def title_of(transcript: Transcript) -> str:
    from stille_post.games import all_games

    definition = all_games().get(transcript.game)
    game = definition.title if definition is not None else transcript.game
    seed = transcript.header.get("seed")
    return f"{game} · seed {seed}" if seed is not None else game


def render_html(transcript: Transcript) -> str:
    css, js = _asset("viewer.css"), _script(transcript.game)
    data = view_data(transcript)
    csp = (
        "default-src 'none'; "
        f"script-src {_csp_hash(js)}; "
        f"style-src {_csp_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    template = _environment().get_template("page.html.j2")
    return template.render(
        title=title_of(transcript),
        csp=csp,
        css=Markup(css),
        js=Markup(js),
        data_json=Markup(script_json(data)),
        seats=data["seats"],
        placements=data["placements"],
        result=transcript.result,
        complete=transcript.complete,
        game=transcript.game,
    )


def default_output(transcript_path: Path) -> Path:
    return transcript_path.with_suffix(".html")


def write_html(transcript_path: Path, out: Path | None = None) -> Path:
    """Write the page and return its path. Written to a temporary name and renamed, so a
    reader never sees half a page."""
    transcript = Transcript.load(transcript_path)
    target = out if out is not None else default_output(transcript_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(render_html(transcript), encoding="utf-8")
    os.replace(tmp, target)
    return target

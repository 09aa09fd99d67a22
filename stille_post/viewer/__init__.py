"""The HTML replay viewer: one self-contained page per transcript.

It reads only the transcript format (core/transcript.py), so it renders every game the
package has; games without a layout of their own get the generic view, drawn from
their declared event vocabulary.
"""

from __future__ import annotations

from stille_post.viewer.page import default_output, render_html, write_html

__all__ = ["default_output", "render_html", "write_html"]

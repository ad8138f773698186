"""Document → Markdown through a Jinja template: the one rendered text every format derives from.

Content strings are data: they are inserted as values, never evaluated as templates, and the
template fails on any undefined name (StrictUndefined).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from .document import Document
from .labels import LABELS
from .text import fix_cjk_emphasis

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # the output is Markdown; HTML escaping happens when it is parsed
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = lambda text: fix_cjk_emphasis(text.strip())
    env.filters["inline"] = lambda text: fix_cjk_emphasis(" ".join(text.split()))
    env.globals["labels"] = LABELS
    return env


def render_markdown(template: str, doc: Document) -> str:
    """Render `templates/<template>` for `doc`; blank-line runs are collapsed for stable output."""
    text = _environment().get_template(template).render(doc=doc)
    lines, blank = [], 0
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        blank = blank + 1 if not line.strip() else 0
        if in_fence or blank <= 1:
            lines.append(line.rstrip() if not in_fence else line)
    return "\n".join(lines).strip() + "\n"


def write_markdown(markdown: str, doc: Document, target: Path) -> None:
    """The Markdown artifact is the rendered text itself (GitHub-flavoured)."""
    target.write_text(markdown, encoding="utf-8")

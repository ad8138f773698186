"""Document → Markdown through a Jinja template: the one rendered text every format derives from.

Content strings are data: they are inserted as values, never evaluated as templates, and the
template fails on any undefined name (StrictUndefined).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import jinja2

from ..models import REFERENCE
from .document import Document
from .labels import LABELS
from .text import escape_raw_html, fix_cjk_emphasis, github_slug

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
_BACKTICKS = re.compile(r"`{3,}")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


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
    # content is text: its raw HTML escaped, for Markdown viewers (text.escape_raw_html)
    env.filters["md"] = lambda text: escape_raw_html(fix_cjk_emphasis(text.strip()))
    env.filters["inline"] = lambda text: escape_raw_html(fix_cjk_emphasis(" ".join(text.split())))
    env.filters["text"] = escape_raw_html
    env.filters["fenced"] = fenced
    env.filters["slug"] = github_slug  # the anchor a heading of this text gets (html.py)
    env.filters["refs"] = _references
    env.globals["labels"] = LABELS
    return env


@jinja2.pass_context
def _references(context, text: str, lang: str) -> str:
    """`text` with each {ref}`id` written out for this document, in `lang`: a link
    "7.3 Title" where the document prints the question, else its number, title and level."""
    doc = context.get("doc")

    def written(found: re.Match) -> str:
        target = doc.references.get(found.group(1)) if doc is not None else None
        if target is None:
            return f"`{found.group(1)}`"
        title = target.titles[lang]
        item = doc.item_of(found.group(1))
        if item is not None:
            # titled with the target's id: the print renderer (html.py) adds its page number
            return f'[{item.number} {title}](#{item.anchor} "{found.group(1)}")'  # sheets number their own
        level = LABELS[lang][target.level]
        return LABELS[lang]["reference_elsewhere"].format(
            number=target.number, title=title, level=level if lang == "zh" else level.lower())
    return REFERENCE.sub(written, text)


def fenced(code: str, info: str) -> str:
    """`code` as a fenced block that nothing in it can close: the fence is longer than any run
    of backticks the code holds (a line of three backticks inside a string, say)."""
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code}\n{fence}"


def render_markdown(template: str, doc: Document, **values) -> str:
    """Render `templates/<template>` for `doc` (and `values`, e.g. one item of it); blank-line
    runs are collapsed for stable output."""
    text = _environment().get_template(template).render(doc=doc, **values)
    lines, blank = [], 0
    fence = None  # the opening fence of the code block we are in
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None and line.lstrip()[:1] == fence[0] and _closes(line, fence):
            fence = None
        in_fence = fence is not None or opening is not None
        blank = blank + 1 if not line.strip() else 0
        if in_fence or blank <= 1:
            lines.append(line.rstrip() if not in_fence else line)
    return "\n".join(lines).strip() + "\n"


def _closes(line: str, fence: str) -> bool:
    """CommonMark: a closing fence is the same character, at least as long, and nothing else."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def write_markdown(markdown: str, doc: Document, target: Path) -> None:
    """The Markdown artifact is the rendered text itself (GitHub-flavoured)."""
    target.write_text(markdown, encoding="utf-8")

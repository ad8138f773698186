"""Markdown → print HTML: headings with GitHub anchors, each question in its own section,
Pygments-highlighted code, CJK-aware line joining, answer space. The page template and the
print CSS live beside the other templates (templates/page.html.j2, templates/print.css).
"""

from __future__ import annotations

import io
from functools import lru_cache
from html import escape
from urllib.parse import unquote

import jinja2
from markupsafe import Markup
from markdown_it.renderer import RendererHTML
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Token
from pygments.util import ClassNotFound

from .document import Document
from .labels import html_lang, label_in, page_label_parts
from .markdown import TEMPLATES
from .mdparse import (ANSWER_LINES_KEPT, ANSWER_SPACE, answer_space_lines, parse, parser,
                      top_level_blocks)
from .text import github_slug, softbreak_joiner

PYGMENTS_STYLE = "default"
LONG_CODE_LINES = 25
"""A code block longer than this may run on to the next page (print.css, `pre.code.long`);
a shorter one is kept whole, so a long one no longer leaves half a page blank before it."""


@lru_cache(maxsize=8192)
def highlight_code(code: str, language: str) -> str:
    """Pygments HTML of `code`; cached, as one snippet prints in every language and level of a
    build (lexing is most of the time the site and the decks take).

    Tokens the style does not colour (names, punctuation) and blanks are merged into plain
    text instead of getting a span each: the page looks the same, and WeasyPrint lays out far
    fewer boxes. Measured on the advanced answer key in English (356 pages): peak memory
    1700 → 1085 MiB and time 124 → 93 s (bench/render.py reports memory per page).
    """
    tokens = [(Token.Text if _unstyled(kind) else kind, text)
              for kind, text in _lexer(language).get_tokens(code)]
    out = io.StringIO()
    _formatter().format(tokens, out)
    return out.getvalue()


@lru_cache(maxsize=None)
def _lexer(language: str):
    try:
        return get_lexer_by_name(language or "text")
    except ClassNotFound:
        return get_lexer_by_name("text")


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True)  # building one computes its whole style sheet


@lru_cache(maxsize=None)
def _unstyled(kind) -> bool:
    if kind in Token.Text.Whitespace:  # a colour on blanks shows nothing
        return True
    style = get_style_by_name(PYGMENTS_STYLE).style_for_token(kind)
    return not any(style[key] for key in ("color", "bgcolor", "bold", "italic", "underline",
                                           "border"))


class _PrintRenderer(RendererHTML):
    """markdown-it's HTML renderer with ptbank's print rules."""

    def fence(self, tokens, idx, options, env) -> str:
        token = tokens[idx]
        language = token.info.strip().split(" ")[0]
        body = highlight_code(token.content, language)
        long = " long" if token.content.count("\n") > LONG_CODE_LINES else ""
        return f'<pre class="code highlight{long}"><code>{body}</code></pre>\n'

    def heading_open(self, tokens, idx, options, env) -> str:
        text = "".join(c.content for c in tokens[idx + 1].children or [])
        slug = github_slug(text)
        count = env.setdefault("slugs", {}).get(slug, 0)
        env["slugs"][slug] = count + 1
        anchor = slug if count == 0 else f"{slug}-{count}"
        return f'<{tokens[idx].tag} id="{escape(anchor)}">'

    def link_open(self, tokens, idx, options, env) -> str:
        """In-document links keep their raw fragment: ids are raw text, and WeasyPrint's
        target-counter() (TOC page numbers) matches the href literally, percent-escapes and all.
        """
        token = tokens[idx]
        href = token.attrGet("href") or ""
        if href.startswith("#"):
            token.attrSet("href", unquote(href))
        return self.renderToken(tokens, idx, options, env)

    def softbreak(self, tokens, idx, options, env) -> str:
        before = tokens[idx - 1].content if idx > 0 else ""
        after = tokens[idx + 1].content if idx + 1 < len(tokens) else ""
        return softbreak_joiner(before, after)

    def ptbank_answer_space(self, tokens, idx, options, env) -> str:
        """A box of ruled lines; the first few are kept with the question (see print.css).
        A coding task's box is a grid of numbered rows."""
        code = tokens[idx].meta["code"]
        lines = answer_space_lines(tokens[idx].meta["minutes"], code)

        def line(number: int) -> str:
            caption = (f'<span class="caption">{escape(env["write_here"])}</span>'
                       if number == 1 else "")
            numeral = f'<span class="number">{number}</span>' if code else ""
            return f'<div class="line">{numeral}{caption}</div>'

        kept = "".join(line(n) for n in range(1, ANSWER_LINES_KEPT + 1))
        rest = "".join(line(n) for n in range(ANSWER_LINES_KEPT + 1, lines + 1))
        kind = "answer-space code" if code else "answer-space"
        return f'<div class="{kind}"><div class="kept">{kept}</div>{rest}</div>\n'


def markdown_to_html_body(markdown: str, langs: tuple[str, ...] | list[str]) -> str:
    """Body HTML with each question (from its h3 to the next h2/h3) in a <section>.

    The heading, the meta line and the first paragraph sit in one unbreakable block so that a
    question never starts at the bottom of a page; where room to write follows (questions-only
    editions), the whole question text does, and the room's first lines stay with it.
    """
    tokens = parse(markdown)
    renderer = _renderer()
    env: dict = {"write_here": label_in(langs, "write_here")}
    out: list[str] = []
    in_question = False
    blocks = top_level_blocks(tokens)
    i = 0
    while i < len(blocks):
        block = blocks[i]
        head = block[0]
        if head.type == "heading_open" and head.tag in ("h1", "h2", "h3"):
            if in_question:
                out.append("</section>\n")
                in_question = False
            if head.tag == "h3":
                keep = blocks[i:_end_of_question_text(blocks, i)]
                out.append('<section class="question"><div class="keep">\n')
                out.extend(renderer.render(b, parser().options, env) for b in keep)
                out.append("</div>\n")
                in_question = True
                i += len(keep)
                continue
        out.append(renderer.render(block, parser().options, env))
        i += 1
    if in_question:
        out.append("</section>\n")
    return "".join(out)


def _end_of_question_text(blocks: list[list], start: int) -> int:
    """Index of the answer space after the h3 at `start`; else just past its first paragraph."""
    for end in range(start + 1, len(blocks)):
        kind = blocks[end][0].type
        if kind == ANSWER_SPACE:
            return end
        if kind == "heading_open":
            break
    return min(start + 3, len(blocks))


def blocks_to_html(blocks: list[list], env: dict) -> str:
    """HTML of top-level Markdown blocks, rendered as in print (highlighted code, anchors)."""
    return "".join(_renderer().render(block, parser().options, env) for block in blocks)


@lru_cache(maxsize=1)
def _renderer() -> _PrintRenderer:
    return _PrintRenderer(parser())


@lru_cache(maxsize=1)
def _page_template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             undefined=jinja2.StrictUndefined, autoescape=True)
    return env.get_template("page.html.j2")


@lru_cache(maxsize=1)
def _stylesheets() -> tuple[Markup, Markup]:
    """Pygments' token colours and the print CSS, read once per process."""
    pygments_css = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")
    return Markup(pygments_css), Markup((TEMPLATES / "print.css").read_text("utf-8"))


def _css_string(text: str) -> Markup:
    """Text safe inside a double-quoted CSS string in a <style> element."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3c ")
    return Markup(escaped)


def render_html(markdown: str, doc: Document) -> str:
    """The full HTML page WeasyPrint prints."""
    pygments_css, css = _stylesheets()
    before, middle, after = page_label_parts(doc.langs[0])
    return _page_template().render(
        header_title=_css_string(doc.title),
        page_label_before=_css_string(before), page_label_middle=_css_string(middle),
        page_label_after=_css_string(after),
        doc=doc,
        lang=html_lang(doc.langs[0]),
        css=css,
        pygments_css=pygments_css,
        body=Markup(markdown_to_html_body(markdown, doc.langs)),
    )

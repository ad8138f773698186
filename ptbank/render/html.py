"""Markdown → print HTML: headings with GitHub anchors, each question in its own section,
Pygments-highlighted code, CJK-aware line joining, answer space. The page template and the
print CSS live beside the other templates (templates/page.html.j2, templates/print.css).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache
from html import escape, unescape
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
from .labels import LABELS, html_lang, label_in, page_label_parts, page_ref_parts
from .markdown import TEMPLATES
from .mdparse import (ANSWER_LINES_KEPT, ANSWER_SPACE, answer_space_lines, parse, parser,
                      top_level_blocks)
from .text import heading_anchor, softbreak_joiner, title_language

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
        if token.content.count("\n") <= LONG_CODE_LINES:
            return f'<pre class="code highlight"><code>{body}</code></pre>\n'
        return (f'<pre class="code highlight long"><code>{body}</code></pre>'
                '<div class="code-end"></div>\n')

    def heading_open(self, tokens, idx, options, env) -> str:
        text = "".join(c.content for c in tokens[idx + 1].children or [])
        anchor = heading_anchor(text, env.setdefault("slugs", {}))
        if tokens[idx].tag in ("h2", "h3"):  # a chapter's or a question's: where a reference is
            env["heading"] = anchor
        return f'<{tokens[idx].tag} id="{escape(anchor)}">'

    def link_open(self, tokens, idx, options, env) -> str:
        """In-document links keep their raw fragment: ids are raw text, and WeasyPrint's
        target-counter() (TOC page numbers) matches the href literally, percent-escapes and all.
        """
        token = tokens[idx]
        href = token.attrGet("href") or ""
        if href.startswith("#"):
            token.attrSet("href", unquote(href))
            if token.attrGet("title") and env.get("pages"):  # a cross-reference (markdown.py)
                token.attrSet("class", "xref")
                env["xref"] = unquote(href[1:])
        return self.renderToken(tokens, idx, options, env)

    def link_close(self, tokens, idx, options, env) -> str:
        target = env.pop("xref", None)
        if target is None:
            return self.renderToken(tokens, idx, options, env)
        start = max(i for i in range(idx) if tokens[i].type == "link_open")
        text = "".join(token.content for token in tokens[start + 1:idx])
        return "</a>" + page_reference(target, env, text)

    def softbreak(self, tokens, idx, options, env) -> str:
        before = tokens[idx - 1].content if idx > 0 else ""
        after = tokens[idx + 1].content if idx + 1 < len(tokens) else ""
        return softbreak_joiner(before, after)

    def ptbank_answer_space(self, tokens, idx, options, env) -> str:
        """A box of ruled lines; the first few are kept with the question and the last few
        together (see print.css), so a box that runs on to the next page takes a few lines
        there, not a sliver of one. A coding task's box is a grid of numbered rows."""
        code = tokens[idx].meta["code"]
        lines = answer_space_lines(tokens[idx].meta["minutes"], code)
        words = env["notes_here" if tokens[idx].meta.get("notes") else "write_here"]

        def line(number: int) -> str:
            caption = (f'<span class="caption">{escape(words)}</span>'
                       if number == 1 else "")
            numeral = f'<span class="number">{number}</span>' if code else ""
            return f'<div class="line">{numeral}{caption}</div>'

        def kept(first: int, last: int) -> str:
            return f'<div class="kept">{"".join(line(n) for n in range(first, last + 1))}</div>'

        head = min(ANSWER_LINES_KEPT, lines)
        tail = max(head + 1, lines - ANSWER_LINES_KEPT + 1)  # a box runs on by a few lines,
        middle = "".join(line(n) for n in range(head + 1, tail))  # never by one
        end = kept(tail, lines) if tail <= lines else ""
        kind = "answer-space code" if code else "answer-space"
        return f'<div class="{kind}">{kept(1, head)}{middle}{end}</div>\n'


PAGE_REFERENCE = "ref:"
"""Prefix of the id of a cross-reference's page number: `ref:<lang>:<n>:<question>:<target>`,
the n-th reference to `target` in the question whose anchor is `question` (unique in a
document, and unchanged by edits of other questions, so that a part's HTML stays what it was);
pdf_parts.py reads the target and the language back from it."""
_PAGE_DIGITS = "000"
"""The room a page number takes: three tabular digits, hidden. The number is drawn into that
room (print.css in a document laid out whole; pdf_parts.py, once every part's pages are
known, in one laid out in parts), centered where blanks set it off on both sides ("第 59 页");
where it ends on a parenthesis, the words that open the reference are drawn into the room with
it, right-aligned, so that a shorter number leaves its gap before the "(", where there is a
space anyway, and not before the ")" ("(p. 59 )")."""


def page_ref_words(lang: str) -> tuple[str, str, str]:
    """The words of a reference's page around its number, as the room splits them: those
    laid out before the room, those drawn in it before the number, and those after it:
    (" ", "(p.\u00a0", ")") in English, ("（第\u00a0", "", "\u00a0页）") in Chinese."""
    before, after = page_ref_parts(lang)
    if after[:1].isspace():  # set off on both sides: the room is the number's alone
        return before, "", after
    opening = before.lstrip()
    return before[: len(before) - len(opening)], opening, after


def page_reference(target: str, env: dict, text: str) -> str:
    """The page of a cross-reference to the anchor `target`, after its link text `text`:
    " (p. 152)" in English, "（第 152 页）" in Chinese (the language of the link's title)."""
    source = env.get("heading", "")
    counts = env.setdefault("xref_counts", {})
    n = counts[source, target] = counts.get((source, target), 0) + 1
    lang = title_language(text)
    number_id = escape(f"{PAGE_REFERENCE}{lang}:{n}:{source}:{target}")
    room = escape(page_ref_words(lang)[1] + _PAGE_DIGITS)
    return (f'<span class="page-ref" lang="{html_lang(lang)}"><span class="page-number" '
            f'id="{number_id}" data-target="#{escape(target)}">{room}</span></span>')


def markdown_to_html_body(markdown: str, langs: tuple[str, ...] | list[str]) -> str:
    """Body HTML with each question (from its h3 to the next h2/h3) in a <section>.

    The heading, the meta line and the first paragraph sit in one unbreakable block so that a
    question never starts at the bottom of a page; where room to write follows (questions-only
    editions), the whole question text does, and the room's first lines stay with it.
    """
    return "".join(piece for chapter in markdown_to_html_chapters(markdown, langs)
                   for piece in chapter)


def markdown_to_html_chapters(markdown: str,
                              langs: tuple[str, ...] | list[str]) -> list[list[str]]:
    """The body HTML cut where a page break is certain: a chapter per h2 (print.css breaks
    the page before each), the first holding what precedes the first h2. Each chapter is a
    list of pieces: its start, then one per question section, so a PDF laid out in parts
    (pdf_parts.py) can also cut between questions."""
    tokens = parse(markdown)
    renderer = _renderer()
    env: dict = {"write_here": label_in(langs, "write_here"),
                 "notes_here": label_in(langs, "notes"),
                 "pages": True}  # printed on pages: a cross-reference gives its target's
    chapters: list[list[str]] = [[]]
    piece: list[str] = []
    in_question = False

    def cut(new_chapter: bool) -> None:
        nonlocal piece, in_question
        if in_question:
            piece.append("</section>\n")
            in_question = False
        if piece:
            chapters[-1].append("".join(piece))
            piece = []
        if new_chapter and chapters[-1]:
            chapters.append([])

    blocks = top_level_blocks(tokens)
    i = 0
    while i < len(blocks):
        block = blocks[i]
        head = block[0]
        if head.type == "heading_open" and head.tag in ("h1", "h2", "h3"):
            cut(new_chapter=head.tag == "h2")
            if head.tag == "h3":
                keep = blocks[i:_end_of_question_text(blocks, i)]
                piece.append('<section class="question"><div class="keep">\n')
                piece.extend(renderer.render(b, parser().options, env) for b in keep)
                piece.append("</div>\n")
                in_question = True
                i += len(keep)
                continue
        piece.append(renderer.render(block, parser().options, env))
        i += 1
    cut(new_chapter=False)
    return chapters


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


@dataclass(frozen=True)
class PageLayer:
    """What one WeasyPrint layout of a document draws. The whole document at once draws
    everything; laid out in parts (pdf_parts.py), each part draws the running header, only
    the part that opens with the title page has its :first rule, the contents take their
    numbers from `data-page` attributes (their targets lie in other parts), and the page
    numbers are a layer of their own, drawn once the total is known."""

    header: bool = True
    footer: bool = True
    title_page: bool = True
    toc_numbers_given: bool = False
    page_numbers_drawn_over: bool = False
    """Cross-references' page numbers: left out, to be drawn over the merged pages."""
    bare: bool = False
    """Pages with no margins: a layer positioned in page coordinates."""


WHOLE = PageLayer()


def render_html(markdown: str, doc: Document) -> str:
    """The whole document as one HTML page, as WeasyPrint prints it when not in parts."""
    return print_page(markdown_to_html_body(markdown, doc.langs), doc)


def print_page(body: str, doc: Document, layer: PageLayer = WHOLE) -> str:
    """The HTML page around `body` (print HTML of some or all of `doc`)."""
    pygments_css, css = _stylesheets()
    before, middle, after = page_label_parts(doc.langs[0])
    return _page_template().render(
        header_title=_css_string(doc.title),
        page_label_before=_css_string(before), page_label_middle=_css_string(middle),
        page_label_after=_css_string(after),
        doc=doc,
        layer=layer,
        page_ref_words={html_lang(lang): tuple(map(_css_string, page_ref_words(lang)))
                        for lang in LABELS},
        lang=html_lang(doc.langs[0]),
        css=css,
        pygments_css=pygments_css,
        body=Markup(body),
    )


_IN_DOCUMENT_LINK = re.compile(r'<a href="#([^"]*)"')


def with_page_numbers(body: str, page_of: dict[str, int]) -> str:
    """`body` with `data-page="N"` on each in-document link whose target is in `page_of`."""
    def numbered(found: re.Match) -> str:
        page = page_of.get(unescape(found.group(1)))
        return found.group(0) if page is None else f'{found.group(0)} data-page="{page}"'
    return _IN_DOCUMENT_LINK.sub(numbered, body)

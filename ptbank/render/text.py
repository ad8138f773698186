"""Small text rules shared by every format: slugs, CJK emphasis, CJK line joining, raw HTML."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_CJK_CHAR = r"\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_PUNCT = "，。、；：？！…—「」『』（）《》〈〉【】“”‘’"
_FENCE_OR_CODE = re.compile(r"(^(?:```|~~~)[^\n]*\n.*?^(?:```|~~~)[ \t]*$|`[^`\n]+`)", re.M | re.S)
# `**注意：**后面`: a closing `**` after punctuation and before a CJK letter is not right-flanking
# under CommonMark (GitHub included), so it prints literally; the same holds for an opening
# `**` before punctuation and after a letter. Moving the punctuation outside the pair fixes it.
_STRONG_PAIR = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.S)
_PUNCT_CLASS = f"[{_CJK_PUNCT}]"


def is_cjk(char: str) -> bool:
    return bool(char) and re.match(f"[{_CJK_CHAR}]", char) is not None


def title_language(title: str) -> str:
    """The language a question's title is in: "zh" where it holds a CJK character, else
    "en" (lint holds every zh title to one and every en title to none)."""
    return "zh" if any(map(is_cjk, title)) else "en"


def fix_cjk_emphasis(markdown: str) -> str:
    """Rewrite CJK bold that CommonMark would not recognise; code is left untouched."""
    parts = _FENCE_OR_CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        parts[i] = _STRONG_PAIR.sub(_move_punctuation_out, parts[i])
    return "".join(parts)


_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})")
_BLANK_LINE = re.compile(r"(\n[ \t]*\n)")
_BACKTICKS = re.compile(r"`+")
_PROSE_SPECIAL = re.compile(r"[\\`<]")
"""What a paragraph's scan stops at: an escape, a code span, or a `<` to escape."""


def escape_raw_html(markdown: str) -> str:
    """Content's Markdown with every `<` outside code written `\\<`, so that a Markdown viewer
    (which renders raw HTML) shows `<script>` as the text it is. Every other format parses
    without raw HTML, where `\\<` prints as `<`: only the Markdown artifact reads differently.

    Code is what the lint rules take it for: fenced blocks (a line that opens with ``` or
    ~~~, indented or not) and code spans (a run of backticks to the next run as long, within
    a paragraph); a `<` already escaped stays as it is.
    """
    out, prose, fence = [], [], None
    for line in markdown.split("\n"):
        opening = _FENCE_LINE.match(line)
        if fence is None and not opening:
            prose.append(line)
            continue
        if fence is None:
            out += [_escape_prose("\n".join(prose))] if prose else []
            prose, fence = [], opening.group(1)
        elif (stripped := line.strip()) and set(stripped) == {fence[0]} \
                and len(stripped) >= len(fence):
            fence = None
        out.append(line)
    out += [_escape_prose("\n".join(prose))] if prose else []
    return "\n".join(out)


def _escape_prose(text: str) -> str:
    """Paragraph by paragraph (a code span never crosses a blank line); blank lines kept."""
    parts = _BLANK_LINE.split(text)
    return "".join(part if i % 2 else _escape_paragraph(part) for i, part in enumerate(parts))


def _escape_paragraph(text: str) -> str:
    if "<" not in text:  # most paragraphs: nothing to escape
        return text
    out, i = [], 0
    while special := _PROSE_SPECIAL.search(text, i):
        out.append(text[i: special.start()])
        i, char = special.start(), special.group()
        if char == "\\":  # an escape (`\\<`, `\\``) is kept with what it escapes
            out.append(text[i: i + 2])
            i += 2
        elif char == "`":
            run = _BACKTICKS.match(text, i).group()
            close = re.compile(f"(?<!`){run}(?!`)").search(text, i + len(run))
            end = close.end() if close else i + len(run)  # unclosed: literal backticks
            out.append(text[i:end])
            i = end
        else:
            out.append("\\<")
            i += 1
    out.append(text[i:])
    return "".join(out)


def _move_punctuation_out(pair: re.Match) -> str:
    text, source, start, end = pair.group(1), pair.string, pair.start(), pair.end()
    before, after = source[start - 1: start], source[end: end + 1]
    lead = re.match(f"{_PUNCT_CLASS}+", text)
    trail = re.search(f"{_PUNCT_CLASS}+$", text)
    head = lead.group(0) if lead and before and not before.isspace() else ""
    tail = trail.group(0) if trail and after and not after.isspace() and \
        not re.match(_PUNCT_CLASS, after) else ""
    inner = text[len(head): len(text) - len(tail)]
    return f"{head}**{inner}**{tail}" if inner else pair.group(0)


def softbreak_joiner(before: str, after: str) -> str:
    """What a soft line break becomes: nothing between CJK characters, a space otherwise.

    Chinese has no spaces between words, so a source line break inside a Chinese sentence
    must not print as a gap.
    """
    return "" if is_cjk(before[-1:]) or is_cjk(after[:1]) else " "


@lru_cache(maxsize=16384)
def inline_text(markdown: str) -> str:
    """Plain text of one line of inline Markdown, as a reader sees it (markup removed).
    Cached: every heading's anchor is read from it, in every edition a build writes."""
    from .mdparse import parser

    tokens = parser().parseInline(markdown)
    children = tokens[0].children if tokens else []
    return "".join(t.content for t in children or [] if t.type in ("text", "code_inline"))


def github_slug(text: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = []
    for char in text.strip().lower():
        category = unicodedata.category(char)
        if char in "-_" or char == " " or category[0] in "LNM":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def heading_anchor(text: str, seen: dict[str, int]) -> str:
    """The anchor of the heading `text` in a document whose earlier headings' slugs `seen`
    counts (and now this one's): its slug, then slug-1, slug-2 for the next ones sharing it,
    as GitHub numbers them. Every format that links to headings names them so."""
    slug = github_slug(text)
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"

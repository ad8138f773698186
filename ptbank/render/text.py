"""Small text rules shared by every format: slugs, CJK emphasis, CJK line joining."""

from __future__ import annotations

import re
import unicodedata

_CJK_CHAR = r"\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_PUNCT = "，。、；：？！…—「」『』（）《》〈〉【】“”‘’"
_FENCE_OR_CODE = re.compile(r"(^(?:```|~~~)[^\n]*\n.*?^(?:```|~~~)[ \t]*$|`[^`\n]+`)", re.M | re.S)
# `**注意：**后面`: a closing `**` after punctuation and before a CJK letter is not right-flanking
# under CommonMark (GitHub included), so it prints literally. Moving the punctuation out fixes it.
_CLOSING = re.compile(rf"(\*\*|__)([^*_\n]+?)([{_CJK_PUNCT}]+)\1(?=[{_CJK_CHAR}])")
_OPENING = re.compile(rf"(?<=[{_CJK_CHAR}A-Za-z0-9])(\*\*|__)([{_CJK_PUNCT}]+)([^*_\n]+?)\1")


def is_cjk(char: str) -> bool:
    return bool(char) and re.match(f"[{_CJK_CHAR}]", char) is not None


def fix_cjk_emphasis(markdown: str) -> str:
    """Rewrite CJK emphasis that CommonMark would not recognise; code is left untouched."""
    parts = _FENCE_OR_CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        parts[i] = _OPENING.sub(r"\2\1\3\1", _CLOSING.sub(r"\1\2\1\3", parts[i]))
    return "".join(parts)


def softbreak_joiner(before: str, after: str) -> str:
    """What a soft line break becomes: nothing between CJK characters, a space otherwise.

    Chinese has no spaces between words, so a source line break inside a Chinese sentence
    must not print as a gap.
    """
    return "" if is_cjk(before[-1:]) or is_cjk(after[:1]) else " "


def inline_text(markdown: str) -> str:
    """Plain text of one line of inline Markdown, as a reader sees it (markup removed)."""
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

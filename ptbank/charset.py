"""The characters a question may hold: an allow-list, so that what prints is what runs.

"Trojan Source" tricks make printed code read otherwise than it runs, and printed prose
otherwise than it says: characters that print as nothing (U+3164 HANGUL FILLER, a zero-width
joiner, a tag character), that reorder or hide what follows (direction overrides, U+2028,
a carriage return), that change what precedes them (a combining overlay turns `=` into `≠`)
or that look like another one (Cyrillic `х` for `x`). No list of bad characters is ever
complete, so this module says what is allowed instead:

- code outside comments and strings (names, operators, numbers): printable ASCII and tabs;
- comments and strings in code, and the other text of a snippet: that, plus the visible
  letters, digits, punctuation and symbols of the blocks below (Latin, Greek, mathematics,
  CJK), the scripts the bank is written in;
- prose (titles, Markdown, rubric points): the same, plus the combining accents that
  mathematics uses (x̂), overlays excepted.

A character the bank comes to need is added to BLOCKS, knowingly.
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

BLOCKS: tuple[tuple[int, int], ...] = (
    (0x00A0, 0x024F),  # Latin-1 Supplement, Latin Extended-A and -B (é, ±, ×, ²)
    (0x0370, 0x03FF),  # Greek (α, σ, Σ)
    (0x1D00, 0x1DBF),  # Phonetic Extensions (ᵀ, ᵢ)
    (0x2000, 0x206F),  # General Punctuation (–, —, “”, …, ‖)
    (0x2070, 0x209F),  # Superscripts and Subscripts (⁻¹, ₂)
    (0x20A0, 0x20CF),  # Currency Symbols
    (0x2100, 0x23FF),  # Letterlike, Number Forms, Arrows, Mathematical Operators, Technical
    (0x2460, 0x25FF),  # Enclosed Alphanumerics, Box Drawing, Block Elements, Shapes
    (0x2700, 0x27FF),  # Dingbats (✓, ✗), Mathematical Symbols-A (⟨⟩), Arrows-A
    (0x2C60, 0x2C7F),  # Latin Extended-C (ⱼ)
    (0x3001, 0x301F),  # CJK punctuation and brackets (、。《》「」【】), not its spaces
    (0x3040, 0x30FF),  # Hiragana and Katakana
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF01, 0xFF65),  # Fullwidth forms (，：（）？～), not the halfwidth Hangul filler
    (0xFFE0, 0xFFEE),  # Fullwidth signs (￥)
)
"""Where a character outside ASCII may come from; within them, only VISIBLE categories."""
VISIBLE = frozenset("LNPS")
"""Letters, numbers, punctuation, symbols: no format (Cf), control, separator or mark."""
ACCENTS = (0x0300, 0x036F)
"""Combining Diacritical Marks, allowed in prose but for OVERLAYS and the grapheme joiner."""
NOT_ACCENTS = frozenset(range(0x0334, 0x0339)) | {0x034F}

_TEXT_TOKENS = {tokenize.COMMENT, tokenize.STRING}
_TEXT_TOKENS |= {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}  # Python 3.12+


class Finding(NamedTuple):
    """A character that is not allowed where it stands (1-based line and column)."""

    line: int
    column: int
    char: str
    in_code: bool
    """True: in code outside comments and strings, where only ASCII is allowed."""

    def describe(self) -> str:
        fallback = "a control character" if unicodedata.category(self.char) == "Cc" else "unnamed"
        return f"U+{ord(self.char):04X} ({unicodedata.name(self.char, fallback)})"


def allowed_in_text(char: str, prose: bool = False) -> bool:
    """Whether `char` may stand in a comment, a string or (with `prose`) prose."""
    point = ord(char)
    if 0x20 <= point < 0x7F or char in "\t\n":
        return True
    if any(low <= point <= high for low, high in BLOCKS):
        return unicodedata.category(char)[0] in VISIBLE
    return (prose and ACCENTS[0] <= point <= ACCENTS[1] and point not in NOT_ACCENTS)


_NOT_IN_CODE = re.compile("[^\t\x20-\x7e]")


def allowed_in_code(char: str) -> bool:
    """Whether `char` may stand in code outside comments and strings."""
    return 0x20 <= ord(char) < 0x7F or char in "\t\n"


def _not_allowed(prose: bool) -> re.Pattern:
    """A pattern that matches any character allowed_in_text refuses (one search per line)."""
    points = [p for low, high in BLOCKS + (ACCENTS,) for p in range(low, high + 1)
              if allowed_in_text(chr(p), prose)]
    runs, start = [], points[0]
    for before, after in zip(points, points[1:] + [-1]):
        if after != before + 1:
            runs.append(f"{re.escape(chr(start))}-{re.escape(chr(before))}")
            start = after
    return re.compile("[^\t\x20-\x7e" + "".join(runs) + "]")


_NOT_IN_TEXT = {prose: _not_allowed(prose) for prose in (False, True)}


def text_findings(text: str, prose: bool = False) -> Iterator[Finding]:
    """The first character not allowed on each line of `text`."""
    for number, line in enumerate(text.split("\n"), 1):
        found = _NOT_IN_TEXT[prose].search(line)
        if found:
            yield Finding(number, found.start() + 1, found.group(), in_code=False)


def code_findings(code: str) -> Iterator[Finding]:
    """The first character not allowed on each line of Python `code`, ASCII being the rule
    outside the comments and strings that the tokenizer finds (what follows code it cannot
    tokenize is held to the rule for comments and strings)."""
    in_text = None  # tokenized only when a line holds more than ASCII
    for number, line in enumerate(code.split("\n"), 1):
        if not _NOT_IN_CODE.search(line):
            continue
        for column, char in enumerate(line, 1):
            if allowed_in_code(char):
                continue
            in_text = in_text or _text_positions(code)
            inside = in_text(number, column - 1)
            if not (inside and allowed_in_text(char)):
                yield Finding(number, column, char, in_code=not inside)
                break


def _text_positions(code: str):
    """(line, 0-based column) → whether it is inside a comment or a string."""
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    untokenized: tuple[int, int] | None = (0, 0)  # where the tokenizer gave up
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in _TEXT_TOKENS:
                spans.append((token.start, token.end))
            untokenized = token.end
        untokenized = None
    except (tokenize.TokenError, SyntaxError):
        pass

    def inside(line: int, column: int) -> bool:
        at = (line, column)
        return ((untokenized is not None and at >= untokenized)
                or any(start <= at < end for start, end in spans))

    return inside

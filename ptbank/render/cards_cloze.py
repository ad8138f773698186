"""Where a rubric point is cut into a cue and a gap: the one idea its flashcard asks for.

A rubric point says what a strong answer contains ("view never copies; it changes shape and
strides"). Its card shows the point with one part left out (a cloze): the rest of the point and
the question it belongs to are the cue, the part left out is what the reader recalls. The part
is chosen from how the point is written, in this order (the first that fits wins):

1. a closing parenthesis: the reason or detail in it ("… fails when forward calls NumPy
   (BatchedTensors have no storage)");
2. what follows the first semicolon or colon ("view never copies; it changes …");
3. what follows the first comma;
4. what follows the first " and ", " so ", " because ", " but ", " such as ", " e.g. "
   (并 / 因此 / 所以 / 但 / 例如 / 比如);
5. the second half of the point's words: cut at a space, or in Chinese where the script
   changes or after 的 / 或 / 和 / 与 (between two hanzi of one word only where nothing else
   will do).

Separators inside parentheses, brackets and code spans do not count, so a gap never cuts
`view(B, T, H, D)` in two. A bilingual card cuts both languages by the same rule where it can,
so one language's cue does not give the other's gap away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .text import is_cjk

_OPEN, _CLOSE = "([（【", ")]）】"
_SEPARATORS = (
    ("; ", ": ", "；", "：", ";", ":"),
    (", ", "，"),
    (" and ", " so ", " because ", " but ", " such as ", " e.g. ", "并", "因此", "所以", "但",
     "例如", "比如"),
)
_MIN = 3
"""Characters a cue and a gap have at least (a gap of "e.g." asks for nothing)."""


@dataclass(frozen=True)
class Cloze:
    """A point as cue, gap and rest: `before + gap + after` is the point."""

    before: str
    gap: str
    after: str
    rule: int
    """Which of the rules above cut it (1-5)."""


def cloze(point: str, rule: int | None = None) -> Cloze:
    """`point` (one line of inline Markdown) cut by the first rule that fits, or by `rule`
    where that one fits."""
    text = " ".join(point.split())
    cuts = candidates(text)
    if rule is not None and rule in cuts:
        return cuts[rule]
    return cuts[min(cuts)] if cuts else second_half(text)


@lru_cache(maxsize=8192)
def candidates(point: str) -> dict[int, Cloze]:
    """Every rule of 1-4 that fits `point`, by rule number (rule 5, `second_half`, always
    fits). Cached: a point is cut once for the decks of every level (the dict is not to be
    changed)."""
    text = " ".join(point.split())
    depths = _depths(text)
    found: dict[int, Cloze] = {}
    group = _trailing_group(text, depths)
    if group:
        found[1] = Cloze(text[:group[0]], text[group[0]:group[1]], text[group[1]:], 1)
    for rule, separators in enumerate(_SEPARATORS, 2):
        end = _first_separator(text, depths, separators)
        if end:
            gap = text[end:].lstrip()
            found[rule] = Cloze(text[:len(text) - len(gap)], gap, "", rule)
    return found


def _depths(text: str) -> list[int]:
    """The nesting depth of each character: brackets, and a code span as one more level (a
    bracket counts at the depth it opens or closes)."""
    depths, depth, code = [], 0, False
    for char in text:
        if char == "`":
            code = not code
            depths.append(depth + 1)
            continue
        if not code and char in _OPEN:
            depth += 1
        depths.append(depth + code)
        if not code and char in _CLOSE:
            depth = max(0, depth - 1)
    return depths


def _trailing_group(text: str, depths: list[int]) -> tuple[int, int] | None:
    """(start, end) of what the parenthesis that ends `text` holds, when the parenthesis is
    not nested, opens after the point's first quarter, and holds enough to ask for."""
    if not text or text[-1] not in ")）" or depths[-1] != 1:
        return None
    outside = [i for i, depth in enumerate(depths) if depth == 0]
    if not outside:
        return None
    opening = outside[-1] + 1
    if text[opening] not in "(（" or opening < len(text) // 4:
        return None
    if len(text) - 1 - (opening + 1) < _MIN:
        return None
    return opening + 1, len(text) - 1


def _first_separator(text: str, depths: list[int], separators: tuple[str, ...]) -> int | None:
    """Where the gap starts after the first of `separators` at depth 0 that leaves a cue and
    a gap around it."""
    best = None
    for separator in separators:
        start = text.find(separator)
        while start != -1:
            end = start + len(separator)
            if depths[start] == 0 and start >= _MIN and len(text[end:].strip()) >= _MIN:
                if best is None or start < best[0]:
                    best = (start, end)
                break
            start = text.find(separator, start + 1)
    return best[1] if best else None


def second_half(point: str) -> Cloze:
    """Rule 5: the point's second half left out, cut where a word ends nearest the middle,
    outside code spans and brackets where another place will do."""
    text = " ".join(point.split())
    depths = _depths(text)
    middle = len(text) / 2
    order = sorted(range(_MIN, len(text) - _MIN + 1), key=lambda i: abs(i - middle))
    outside = [i for i in order if depths[i] == 0 and depths[i - 1] == 0]
    cut = next((i for i in outside if _word_boundary(text, i)), None)
    if cut is None:
        cut = next((i for i in outside if _boundary(text, i)), None)
    if cut is None:
        cut = next((i for i in order if _boundary(text, i)), len(text) // 2)
    gap = text[cut:].lstrip()
    return Cloze(text[:len(text) - len(gap)], gap, "", 5)


def _word_boundary(text: str, i: int) -> bool:
    """A cut before text[i] that falls between words: at a space, where the script changes
    (hanzi and Latin), or after a particle that ends a phrase."""
    before, after = text[i - 1], text[i]
    if _PUNCTUATION.match(after):
        return False
    return before == " " or is_cjk(before) != is_cjk(after) or before in "的或和与及"


def _boundary(text: str, i: int) -> bool:
    """Any cut between two characters that is not before punctuation."""
    return not _PUNCTUATION.match(text[i]) and text[i] != " "


_PUNCTUATION = re.compile(r"[，。；：、）】”,.;:)\]]")

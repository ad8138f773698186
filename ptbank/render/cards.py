"""Flashcards from questions, by the minimum-information principle: a note per question and
deck language, a card per idea.

The ideas are the question's own: each rubric point (what a strong answer contains) is a
card that shows the point with one part left out (cards_cloze.py), in the context of its
question's title; each short snippet whose outcome the verifier checks (a raise, an output)
is a card that shows the code and asks what it does. The back is the point with its gap filled,
or the outcome; the full question and answer ride along, folded, in the note's Extra field
(cards_extra.py), so they are stored once per note, not once per card.

A card's identity is its note and its slot: the note's GUID comes from the question id and
the deck's language, the slot from the rubric point's index (Point 1..12) or the fact's (Fact
1..3), never from text. Fixing a typo updates the card in place and keeps its review history;
a point removed empties its slot, so that card is not generated; a point added fills one.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from html import escape

from markupsafe import Markup

from ..models import Kind, Question, Snippet
from .cards_cloze import candidates, second_half
from .cards_extra import extra_html
from .document import Document, Item
from .html import highlight_code
from .labels import html_lang, label
from .mdparse import parser
from .text import fix_cjk_emphasis

POINT_SLOTS = 12
"""Rubric points a question may have cards for (the bank's largest rubric has 6)."""
FACT_SLOTS = 3
FACT_LINES = 12
"""A snippet longer than this is not a card: it would not fit a phone screen."""
GAP = "[…]"
_REFERENCE = re.compile(r"\{ref\}`([^`\n]*)`")
"""A cross-reference in content prose (markdown.py's `refs` filter writes it for print)."""

FIELDS: tuple[str, ...] = (
    "Id", "Context", "Extra",
    *(f"Point{k}{side}" for k in range(1, POINT_SLOTS + 1) for side in ("", "Back")),
    *(f"Fact{k}{side}" for k in range(1, FACT_SLOTS + 1) for side in ("", "Back")),
)
"""The note's fields; a card's template shows its slot's pair ("Point3", "Point3Back")."""

CARD_LABELS = {
    "zh": {"complete": "补全这一要点", "runs": "这段代码运行后会怎样？", "full": "完整题目与答案",
           "concepts": "概念", "coding_tasks": "编程题", "output": "输出", "given": "已知"},
    "en": {"complete": "Complete the point", "runs": "What happens when this runs?",
           "full": "Full question and answer", "concepts": "Concepts",
           "coding_tasks": "Coding tasks", "output": "Output", "given": "Given"},
}


def card_label(langs: tuple[str, ...], key: str) -> str:
    """A card's own word in each of the deck's languages: "概念 / Concepts" when bilingual."""
    return " / ".join(CARD_LABELS[lang][key] for lang in langs)


@dataclass(frozen=True)
class CardNote:
    """One question's note: its fields by name (empty slots make no card) and its tags."""

    question: Question
    fields: dict[str, str]

    @property
    def coding(self) -> bool:
        return self.question.kind is Kind.coding

    @property
    def tags(self) -> list[str]:
        q = self.question
        return [f"ptbank::level::{q.level.value}", f"ptbank::topic::{q.topic}",
                f"ptbank::kind::{q.kind.value}"]


_FIELDS: dict[tuple, tuple[Question, dict[str, str]]] = {}


def card_note(doc: Document, item: Item) -> CardNote:
    """The note of `item` in `doc`'s languages (one, or zh and en on the same card)."""
    titles = _titles(doc, item.question)
    fields = dict(_card_fields(item, doc.langs, titles), Extra=extra_html(doc, item))
    return CardNote(item.question, {name: fields[name] for name in FIELDS})


def _card_fields(item: Item, langs: tuple[str, ...], titles: tuple) -> dict[str, str]:
    """Every field but the Extra (which follows its document: a cross-reference in it
    prints differently where the document holds the question), made once for the decks of
    every level. Keyed by the question object's identity, which is safe because the entry
    holds the object and is checked against it (as in questions.py)."""
    key = (id(item.question), langs, tuple(item.topic_name(lang) for lang in langs), titles)
    cached = _FIELDS.get(key)
    if cached is None or cached[0] is not item.question:
        if len(_FIELDS) >= 4096:
            _FIELDS.clear()
        cached = _FIELDS[key] = (item.question, _make_fields(item, langs, dict(titles)))
    return cached[1]


def _make_fields(item: Item, langs: tuple[str, ...], titles: dict) -> dict[str, str]:
    question = item.question
    fields = dict.fromkeys(FIELDS, "")
    fields.update(Id=question.id, Context=_context(item, langs))
    points = len(question.text(langs[0]).rubric)
    if points > POINT_SLOTS:
        raise ValueError(f"{question.id}: {points} rubric points, decks have room for "
                         f"{POINT_SLOTS}")
    given = _given(question, langs)
    for index in range(points):
        front, back = _point(question, index, langs, titles)
        fields[f"Point{index + 1}"] = given + front
        fields[f"Point{index + 1}Back"] = given + back
    for slot, snippet in enumerate(facts(question), 1):
        fields[f"Fact{slot}"] = _code(snippet.code)
        fields[f"Fact{slot}Back"] = _outcome(snippet, langs)
    return fields


def facts(question: Question) -> list[Snippet]:
    """The snippets that make cards: shown with the answer, short, and checked for what they
    do (a raise, an output), not only for running; at most FACT_SLOTS, in source order."""
    return [s for s in question.snippets
            if s.show.value == "answer" and (s.raises or s.stdout)
            and len(s.code.strip().splitlines()) <= FACT_LINES][:FACT_SLOTS]


def _context(item: Item, langs: tuple[str, ...]) -> str:
    question = item.question
    titles = "".join(f'<div class="title" lang="{html_lang(lang)}">'
                     f"{inline(question.text(lang).title)}</div>" for lang in langs)
    shown = [[label(lang, question.level.value) for lang in langs],
             [escape(item.topic_name(lang)) for lang in langs]]
    if question.kind is Kind.coding:  # a concept says nothing its deck does not
        shown.append([label(lang, "coding") for lang in langs])
    meta = " · ".join(" / ".join(values) for values in shown)
    return f'<div class="context">{titles}<div class="meta">{meta}</div></div>'


def _given(question: Question, langs: tuple[str, ...]) -> str:
    """The inputs of a parametrized question, as its decks print it (the canonical variant),
    for its point cards: a point such as "gets 32" or "4.5 GiB" asks for a number the card
    must say how to reach, and the question that states the inputs is folded away in the
    Extra. A fact card shows code, which holds its own values."""
    if not question.params:
        return ""
    values = " · ".join(f"<code>{escape(name)} = {escape(str(param.default))}</code>"
                        for name, param in question.params.items())
    return f'<div class="given">{card_label(langs, "given")}: {values}</div>'


def _point(question: Question, index: int, langs: tuple[str, ...],
           titles: dict) -> tuple[str, str]:
    """The front (the point with its gap) and back (the gap filled) of one rubric point."""
    texts = {lang: _references(question.text(lang).rubric[index], titles, langs.index(lang))
             for lang in langs}
    found = {lang: candidates(text) for lang, text in texts.items()}
    common = set.intersection(*(set(rules) for rules in found.values()))
    cuts = {lang: found[lang][min(common)] if common else second_half(text)
            for lang, text in texts.items()}
    bonus = ""
    if index + 1 in question.bonus:
        bonus = f'<div class="badge">{" / ".join(label(l, "bonus_points") for l in langs)}</div>'
    front, back = [bonus], [bonus]
    for lang, cut in cuts.items():
        before, after = _spaced(cut.before), _spaced(cut.after)
        attrs = f'class="point" lang="{html_lang(lang)}"'
        front.append(f'<div {attrs}>{before}<span class="gap">{GAP}</span>{after}</div>')
        back.append(f'<div {attrs}>{before}<mark>{inline(cut.gap)}</mark>{after}</div>')
    return "".join(front), "".join(back)


def _spaced(markdown: str) -> str:
    """`inline` that keeps a space at either end: the gap sits between words."""
    if not markdown.strip():
        return markdown
    lead = " " if markdown[0].isspace() else ""
    trail = " " if markdown[-1].isspace() else ""
    return f"{lead}{inline(markdown)}{trail}"


def _titles(doc: Document, question: Question) -> tuple:
    """(id, its title in each of `doc`'s languages, or None) of each question the rubric of
    `question` refers to: from the document's references where it has them, else from the
    questions it prints."""
    ids = sorted({found for lang in doc.langs for point in question.text(lang).rubric
                  for found in _REFERENCE.findall(point)})
    if not ids:
        return ()
    known = getattr(doc, "references", None) or {}
    printed = {item.question.id: item.question for section in doc.sections
               for item in section.items}
    found = []
    for qid in ids:
        if qid in known:
            found.append((qid, tuple(known[qid].titles[lang] for lang in doc.langs)))
        elif qid in printed:
            found.append((qid, tuple(printed[qid].text(lang).title for lang in doc.langs)))
        else:
            found.append((qid, None))
    return tuple(found)


def _references(text: str, titles: dict, position: int) -> str:
    """`text` with each cross-reference {ref}`question-id` written as the question's title
    in quotes (a card cannot link to another note), or as its id where it is unknown."""
    def written(found: re.Match) -> str:
        known = titles.get(found.group(1))
        return f"“{known[position]}”" if known else f"`{found.group(1)}`"
    return _REFERENCE.sub(written, text)


def _code(code: str, kind: str = "python") -> str:
    body = highlight_code(code.strip() + "\n", kind)
    return f'<pre class="code highlight"><code>{body}</code></pre>'


def _outcome(snippet: Snippet, langs: tuple[str, ...]) -> str:
    """What the snippet does, in Python's own words: `RuntimeError: view size is not …`, or
    its output."""
    if snippet.stdout:
        return (f'<div class="verdict">{card_label(langs, "output")}</div>'
                f'<pre class="code output"><code>{escape(snippet.stdout.strip())}</code></pre>')
    message = ""
    if snippet.match:
        literal = _literal(snippet.match)
        message = (f': <span class="message">“{escape(literal)}”</span>' if literal else
                   f': <span class="message"><code>/{escape(snippet.match)}/</code></span>')
    return f'<div class="verdict">→ <code>{escape(snippet.raises)}</code>{message}</div>'


def _literal(pattern: str) -> str | None:
    """The text a `match` pattern stands for when it is plain words (escapes and dots aside),
    else None."""
    if re.search(r"(?<!\\)[*+?\[\]{}|^$()]", pattern):
        return None
    return re.sub(r"\\(.)", r"\1", pattern)


@lru_cache(maxsize=16384)
def inline(markdown: str) -> Markup:
    """One line of content Markdown as HTML, as the templates' `inline` filter prints it.

    Most rubric points are words and code spans only: those are written out directly, as
    markdown-it would write them (a test holds the two together), as parsing is most of the
    time a deck's cards take."""
    text = " ".join(markdown.split())
    if not _NOT_PLAIN.search(text) and text.count("`") % 2 == 0:
        pieces = text.split("`")
        return Markup("".join(f"<code>{_escape(piece)}</code>" if odd else _escape(piece)
                              for odd, piece in zip(itertools.cycle((False, True)), pieces)))
    return Markup(parser().renderInline(fix_cjk_emphasis(text)))  # no raw HTML: html=False


_NOT_PLAIN = re.compile(r"[*\[\]\\<>&!~{}|]|``|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|^[#>+-]|"
                        r"^\d+[.)]|  |`\s|\s`")
"""What only the Markdown parser reads right: emphasis, links, escapes, entities, HTML,
doubled backticks, an underscore at a word's edge, block markers, padded code spans."""


def _escape(text: str) -> str:
    return escape(text, quote=False).replace('"', "&quot;")

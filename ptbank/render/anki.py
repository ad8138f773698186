"""Flashcard decks (.apkg) made with genanki: a note per question, a card per idea
(cards.py): each rubric point with one part left out, and each short snippet whose outcome is
checked; the full question and answer folded in the note's Extra, shown under every card.

Decks: `<bank>::<level>::Concepts` and `<bank>::<level>::Coding tasks`. A coding task is a
15-40 minute exercise, not something to recall in seconds; its rubric points are still facts
worth knowing (save_for_backward over ctx.x, gradcheck in float64), so its cards are kept, in a
deck of their own beside the concepts: a reader reviews either alone, or both from the
level's deck.

Importing an updated deck updates its cards instead of duplicating them: a note's GUID comes
from the question id and the deck's language, a card's template from its slot (cards.py), and
the deck and note type ids from their names, never from a counter or the clock. The same
input gives the same bytes: genanki writes with a fixed timestamp (the document's date) and
the archive's entries carry that time too.

The collection is built in memory and written straight into the archive: genanki's own
`write_to_file` goes through an SQLite file in the temporary folder, which it never deletes
(one per deck, every build), and waits on the disk for it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
import zipfile
from dataclasses import replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import genanki
from pygments.formatters import HtmlFormatter

from .cards import FACT_SLOTS, FIELDS, POINT_SLOTS, card_label, card_note
from .document import Document
from .html import PYGMENTS_STYLE
from .labels import label
from .markdown import TEMPLATES
from .questions import prepare

NIGHT_STYLE = "github-dark"
"""Pygments style of code in night mode (the day style is the print one)."""
NIGHT_ROOTS = (".card.nightMode", ".card.night_mode", ".nightMode .card", ".night_mode .card")
"""Where Anki's clients put night mode: the desktop on the body (.card), AnkiDroid on the body
or the root element."""
LEVELS = ("beginner", "intermediate", "advanced", "all")


def render_anki(markdown: str, doc: Document, target: Path) -> None:
    """Write the decks of `doc` (one level, one language or both, with answers) to `target`."""
    deck_lang = "bi" if len(doc.langs) == 2 else doc.langs[0]
    level = _level(doc)
    model = _model(deck_lang, doc.langs)
    decks = {coding: genanki.Deck(
        stable_id("ptbank deck", deck_lang, level, "coding" if coding else "concepts"),
        "::".join((doc.title, " / ".join(label(lang, level) for lang in doc.langs),
                   card_label(doc.langs, "coding_tasks" if coding else "concepts"))))
        for coding in (False, True)}
    items = [replace(item, number="")  # a card stands alone; and so every deck of a
             for section in doc.sections for item in section.items]  # language shares them
    prepare(doc, items)
    for item in items:
        note = card_note(doc, item)
        decks[note.coding].add_note(genanki.Note(
            model=model, fields=[note.fields[name] for name in FIELDS], tags=note.tags,
            guid=note_guid(item.question.id, deck_lang)))
    moment = datetime.strptime(doc.date, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    package = genanki.Package([deck for deck in decks.values() if deck.notes])
    _write_package(package, target, moment)


def note_guid(question_id: str, deck_lang: str) -> str:
    """The note's GUID: the same question in the same language is the same note, whatever
    the deck's level and whatever changed in its text. It names the note type too: the
    one-card-per-question decks ptbank made before had GUIDs without it."""
    return genanki.guid_for("ptbank cards", question_id, deck_lang)


def stable_id(*names: str) -> int:
    """An Anki id (a positive 31-bit integer) that depends only on `names`."""
    digest = hashlib.sha256("\0".join(names).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def _level(doc: Document) -> str:
    """The level the document holds, read back from its subtitle ("高级 · 含答案")."""
    shown = doc.subtitle.split(" · ")[0]
    return next((level for level in LEVELS if label(doc.langs[0], level) == shown), shown)


@lru_cache(maxsize=None)
def _model(deck_lang: str, langs: tuple[str, ...]) -> genanki.Model:
    """The note type: the fields of cards.py and a card template per slot; a template whose
    slot is empty makes no card (its front renders empty)."""
    extra = (f'<details class="extra"><summary>{card_label(langs, "full")}</summary>'
             "{{Extra}}</details>")
    templates = []
    for k in range(1, POINT_SLOTS + 1):
        ask = f'<div class="ask">{card_label(langs, "complete")}</div>'
        templates.append({
            "name": f"Point {k}",
            "qfmt": f"{{{{#Point{k}}}}}{{{{Context}}}}{ask}{{{{Point{k}}}}}{{{{/Point{k}}}}}",
            "afmt": f"{{{{#Point{k}}}}}{{{{Context}}}}{ask}{{{{Point{k}Back}}}}"
                    f"{{{{/Point{k}}}}}{extra}"})
    for k in range(1, FACT_SLOTS + 1):
        ask = f'<div class="ask">{card_label(langs, "runs")}</div>'
        templates.append({
            "name": f"Fact {k}",
            "qfmt": f"{{{{#Fact{k}}}}}{{{{Context}}}}{ask}{{{{Fact{k}}}}}{{{{/Fact{k}}}}}",
            "afmt": f'{{{{FrontSide}}}}<hr id="answer">{{{{Fact{k}Back}}}}{extra}'})
    return genanki.Model(stable_id("ptbank card model", deck_lang), f"ptbank cards ({deck_lang})",
                         fields=[{"name": name} for name in FIELDS], templates=templates,
                         css=card_css(), sort_field_index=0)


@lru_cache(maxsize=1)
def card_css() -> str:
    """templates/anki.css, then code colours: Pygments' day style, and its night style under
    each night-mode root. Under night mode every token first takes the text colour, so that a
    token the night style leaves alone does not keep a day colour meant for a light ground."""
    night = [f"{root} .highlight" for root in NIGHT_ROOTS]
    return "\n".join((
        (TEMPLATES / "anki.css").read_text("utf-8"),
        HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight"),
        ", ".join(f"{prefix} span" for prefix in night) + " { color: inherit; }",
        HtmlFormatter(style=NIGHT_STYLE).get_style_defs(night),
    ))


def _write_package(package: genanki.Package, target: Path, moment: datetime) -> None:
    """The .apkg genanki's write_to_file makes (the collection, then an empty media map),
    with every id and time from `moment` instead of the clock."""
    timestamp = moment.timestamp()
    db = sqlite3.connect(":memory:")
    try:
        with db:  # one transaction, committed before the image is taken
            package.write_to_db(db.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
        collection = db.serialize()
    finally:
        db.close()
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in (("collection.anki2", collection), ("media", json.dumps({}))):
            entry = zipfile.ZipInfo(name, date_time=moment.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)

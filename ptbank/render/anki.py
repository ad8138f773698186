"""Flashcard decks (.apkg) made with genanki: one note per question, the question on the
front, the answer, rubric, follow-ups and checks on the back, code highlighted with the same
Pygments style (its CSS travels in the note type, so cards need no file).

Importing an updated deck updates its cards instead of duplicating them: a note's GUID comes
from the question id and the deck's language, and the deck and note type ids from their names,
never from a counter or the clock. The same input gives the same bytes: genanki writes with a
fixed timestamp (the document's date) and the archive's entries carry that time too.

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
from pathlib import Path

import genanki
from pygments.formatters import HtmlFormatter

from .document import Document
from .html import PYGMENTS_STYLE
from .questions import prepare, question_parts

CARD_CSS = """
.card { font-family: system-ui, "Noto Sans CJK SC", "PingFang SC", sans-serif; font-size: 17px;
        text-align: left; color: #1d1d1f; background: #fff; line-height: 1.55; }
pre.code { background: #f6f8fa; border: 1px solid #e3e3e8; border-radius: 6px; padding: 8px;
           overflow-x: auto; font-size: 13px; }
code { font-family: ui-monospace, "Noto Sans Mono CJK SC", Menlo, Consolas, monospace; }
h3 { font-size: 19px; margin: 0 0 4px; }
h4 { font-size: 15px; margin: 14px 0 4px; color: #c0392b; }
em { color: #6e6e73; font-style: normal; font-size: 14px; }
.in-lang + .in-lang { border-top: 1px dashed #ccc; margin-top: 12px; padding-top: 8px; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: 2px 6px; }
"""


def render_anki(markdown: str, doc: Document, target: Path) -> None:
    """Write the deck of `doc` (one level, one language, with answers) to `target`."""
    deck_lang = "bi" if len(doc.langs) == 2 else doc.langs[0]
    model = genanki.Model(
        stable_id("ptbank question model", deck_lang), f"ptbank ({deck_lang})",
        fields=[{"name": "Question"}, {"name": "Answer"}, {"name": "Id"}],
        templates=[{"name": "Question → answer", "qfmt": "{{Question}}",
                    "afmt": "{{FrontSide}}<hr id=answer>{{Answer}}"}],
        css=CARD_CSS + HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight"),
        sort_field_index=2)
    deck = genanki.Deck(stable_id("ptbank deck", deck_lang, doc.subtitle),
                        f"{doc.title}::{doc.subtitle.split(' · ')[0]}")
    cards = [replace(item, number="")  # a card stands alone; and so every deck of a
             for section in doc.sections for item in section.items]  # language shares them
    prepare(doc, cards)
    for item in cards:
        asked, parts = question_parts(doc, item)
        back = "".join(f"<h4>{heading}</h4>{html}" for heading, html in parts)
        question = item.question
        deck.add_note(genanki.Note(
            model=model, fields=[str(asked), back, question.id],
            tags=[f"ptbank::level::{question.level.value}",
                  f"ptbank::topic::{question.topic}", f"ptbank::kind::{question.kind.value}"],
            guid=note_guid(question.id, deck_lang)))
    moment = datetime.strptime(doc.date, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    _write_package(genanki.Package(deck), target, moment)


def note_guid(question_id: str, deck_lang: str) -> str:
    """The note's GUID: the same question in the same language is the same note, whatever
    the deck's level and whatever changed in its text."""
    return genanki.guid_for("ptbank", question_id, deck_lang)


def stable_id(*names: str) -> int:
    """An Anki id (a positive 31-bit integer) that depends only on `names`."""
    digest = hashlib.sha256("\0".join(names).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


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

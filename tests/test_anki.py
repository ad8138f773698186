"""Anki decks, read back: an .apkg is a zip holding an SQLite collection."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "render"


def build(content: Path, out: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(content),
                             "--format", "anki", "--level", "all,advanced", "--lang",
                             "zh,en,bi", "--draft", "--out", str(out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def read_deck(path: Path, tmp: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["collection.anki2", "media"]
        archive.extract("collection.anki2", tmp)
    db = sqlite3.connect(tmp / "collection.anki2")
    try:
        notes = {row[2].split("\x1f")[2]: {"guid": row[0], "tags": row[1].split(),
                                           "fields": row[2].split("\x1f")}
                 for row in db.execute("select guid, tags, flds from notes")}
        decks = json.loads(db.execute("select decks from col").fetchone()[0])
        cards = db.execute("select count(*) from cards").fetchone()[0]
    finally:
        db.close()
    (tmp / "collection.anki2").unlink()
    return {"notes": notes, "decks": {d["name"]: int(i) for i, d in decks.items()},
            "cards": cards}


def test_one_note_per_question_with_front_back_and_tags(tmp_path: Path):
    build(FIXTURE, tmp_path)
    names = sorted(p.name for p in (tmp_path / "anki").glob("*.apkg"))
    assert names == [f"ptbank-{level}-{lang}.apkg" for level in ("advanced", "all")
                     for lang in ("bi", "en", "zh")]
    deck = read_deck(tmp_path / "anki" / "ptbank-all-en.apkg", tmp_path)
    assert sorted(deck["notes"]) == ["grad-basics", "hostile-markup", "long-code"]
    assert deck["cards"] == 3
    note = deck["notes"]["hostile-markup"]
    front, back, qid = note["fields"]
    assert "Content is data" in front and "EN-ANSWER-MARKER" not in front
    assert "EN-ANSWER-MARKER" in back and "Rubric" in back and "Follow-up" in back
    assert "&lt;script&gt;" in front and "<script>" not in front, "content is data"
    assert 'class="highlight' in front or 'class="code highlight"' in back, "highlighted code"
    assert note["tags"] == ["ptbank::level::beginner", "ptbank::topic::tensors",
                            "ptbank::kind::concept"]
    assert "Render Test Bank::All levels" in deck["decks"]
    advanced = read_deck(tmp_path / "anki" / "ptbank-advanced-en.apkg", tmp_path)
    assert sorted(advanced["notes"]) == ["long-code"]
    assert advanced["notes"]["long-code"]["guid"] == deck["notes"]["long-code"]["guid"], (
        "the same question is the same note in every deck of a language")
    zh = read_deck(tmp_path / "anki" / "ptbank-all-zh.apkg", tmp_path)
    assert zh["notes"]["long-code"]["guid"] != deck["notes"]["long-code"]["guid"]


def test_an_edited_question_keeps_its_guid_and_the_same_input_gives_the_same_bytes(
        tmp_path: Path):
    build(FIXTURE, tmp_path / "a")
    build(FIXTURE, tmp_path / "b")
    for name in ("ptbank-all-zh.apkg", "ptbank-advanced-bi.apkg"):
        assert (tmp_path / "a" / "anki" / name).read_bytes() == \
            (tmp_path / "b" / "anki" / name).read_bytes()
    content = tmp_path / "content"
    shutil.copytree(FIXTURE, content)
    path = content / "autograd" / "grad-basics.yaml"
    path.write_text(path.read_text("utf-8").replace("What is", "What exactly is", 1), "utf-8")
    build(content, tmp_path / "edited")
    before = read_deck(tmp_path / "a" / "anki" / "ptbank-all-en.apkg", tmp_path)
    after = read_deck(tmp_path / "edited" / "anki" / "ptbank-all-en.apkg", tmp_path)
    assert after["notes"]["grad-basics"]["fields"] != before["notes"]["grad-basics"]["fields"]
    assert {q: n["guid"] for q, n in after["notes"].items()} == \
        {q: n["guid"] for q, n in before["notes"].items()}
    assert after["decks"] == before["decks"], "deck ids do not move either"


def test_a_bilingual_card_asks_in_both_languages_on_its_front(tmp_path: Path):
    """The English question belongs on the front beside the Chinese one, not on the back
    under the Chinese follow-ups; each part of the back holds both languages."""
    build(FIXTURE, tmp_path)
    deck = read_deck(tmp_path / "anki" / "ptbank-all-bi.apkg", tmp_path)
    front, back, _ = deck["notes"]["hostile-markup"]["fields"]
    assert "alert(&quot;zh&quot;)" in front and "alert(&quot;en&quot;)" in front
    assert "Content is data" in front and "alert(" not in back
    headings = [part.split("</h4>")[0] for part in back.split("<h4>")[1:]]
    assert headings == ["参考答案 / Reference answer", "评分要点 / Rubric",
                        "追问 / Follow-up questions"]
    answer = back.split("<h4>")[1]
    assert answer.index("ZH-ANSWER-MARKER") < answer.index("EN-ANSWER-MARKER")


def test_building_decks_leaves_no_file_in_the_temporary_folder(tmp_path: Path):
    """genanki's own write_to_file leaves its SQLite file in /tmp after every deck."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800", "TMPDIR": str(scratch)}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(FIXTURE),
                             "--format", "anki", "--lang", "zh,bi", "--draft", "--out",
                             str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "out" / "anki").glob("*.apkg"))) == 2
    assert list(scratch.iterdir()) == []

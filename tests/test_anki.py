"""Anki decks, read back through the real Anki backend (the `anki` package): imported into a
fresh collection, their cards rendered as Anki renders them, and shown in chromium at phone
width in day and night mode."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import zipfile
from html import unescape
from pathlib import Path

import pytest
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

from ptbank.loader import load_bank
from ptbank.models import Kind, Level
from ptbank.render.cards import inline
from ptbank.render.cards_cloze import cloze
from ptbank.render.mdparse import parser
from ptbank.render.text import fix_cjk_emphasis

ROOT = Path(__file__).resolve().parents[1]
RENDER = ROOT / "tests" / "fixtures" / "render"
CARDS = ROOT / "tests" / "fixtures" / "anki"
EPOCH = 1764460800  # 2025-11-30
EXTRA = re.compile(r"<details\b.*?</details>", re.S)


def build(content: Path, out: Path, levels: str = "all,advanced", langs: str = "zh,en,bi",
          epoch: int = EPOCH) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(content),
                             "--format", "anki", "--level", levels, "--lang", langs,
                             "--draft", "--out", str(out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def import_deck(apkg: Path, collection: Path) -> Collection:
    """`apkg` imported into the collection at `collection` (created when missing), with
    Anki's default options: notes already there are updated when the deck's are newer."""
    col = Collection(str(collection))
    col.import_anki_package(ImportAnkiPackageRequest(
        package_path=str(apkg), options=ImportAnkiPackageOptions(with_scheduling=False)))
    return col


def cards_of(col: Collection) -> list[dict]:
    """Every card as Anki renders it: its deck, note, template, question and answer HTML, and
    the answer without its collapsible Extra (what a reader sees before opening it)."""
    found = []
    for cid in sorted(col.find_cards("")):
        card = col.get_card(cid)
        note = card.note()
        output = card.render_output()
        found.append({
            "id": cid, "guid": note.guid, "ord": card.ord, "qid": note["Id"],
            "template": card.template()["name"], "deck": col.decks.name(card.did),
            "kind": card.note_type()["name"], "tags": note.tags,
            "front": output.question_text, "answer": output.answer_text,
            "back": EXTRA.sub("", output.answer_text), "styled": card.answer(),
            "front_styled": card.question(), "reps": card.reps})
    return found


@pytest.fixture(scope="module")
def decks(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("decks")
    build(CARDS, out)
    return out


@pytest.fixture(scope="module")
def imported(decks: Path, tmp_path_factory) -> dict[str, list[dict]]:
    """The cards of each deck of the fixture bank, each deck in a fresh collection."""
    found = {}
    for apkg in sorted(decks.glob("*.apkg")):
        col = import_deck(apkg, tmp_path_factory.mktemp(apkg.stem) / "collection.anki2")
        try:
            found[apkg.stem.removeprefix("ptbank-")] = cards_of(col)
        finally:
            col.close()
    return found


# --- what a card is -------------------------------------------------------------------------

def test_a_card_per_rubric_point_and_per_short_verified_fact(imported):
    cards = imported["all-en"]
    points = [c for c in cards if c["template"].startswith("Point")]
    facts = [c for c in cards if c["template"].startswith("Fact")]
    bank = load_bank(CARDS)
    assert len(points) == sum(len(q.en.rubric) for q in bank.questions)
    by_q = {q: sorted(c["ord"] for c in points if c["qid"] == q) for q in
            ("view-lite", "grad-lite", "softmax-task")}
    assert by_q == {"view-lite": [0, 1, 2], "grad-lite": [0, 1], "softmax-task": [0, 1]}
    # the short snippets whose outcome is checked (a raise, an output); not a long one
    assert sorted((c["qid"], c["template"]) for c in facts) == [
        ("grad-lite", "Fact 1"), ("view-lite", "Fact 1")]
    assert len({c["guid"] for c in cards if c["qid"] == "view-lite"}) == 1, (
        "one note per question: its cards are siblings, and its full answer is stored once")


def test_a_point_card_asks_for_one_idea_in_the_context_of_its_question(imported):
    card = next(c for c in imported["all-en"] if c["qid"] == "view-lite" and c["ord"] == 0)
    front, back = card["front"], card["back"]
    assert "When does view() fail?" in front, "the question it belongs to"
    assert "EN-HIDDEN-MARKER" not in front and "[…]" in front, "the idea is asked, not told"
    assert "shares storage with the input" in front, "the rest of the point is the cue"
    assert "EN-HIDDEN-MARKER" in back and "EN-ANSWER-MARKER" not in back
    assert "EN-ANSWER-MARKER" in card["answer"], "the full answer, folded in the Extra"
    assert re.search(r"<details\b[^>]*>\s*<summary>", card["answer"])
    bonus = next(c for c in imported["all-en"] if c["qid"] == "view-lite" and c["ord"] == 2)
    assert "Bonus" in bonus["front"] and "Bonus" not in card["front"]
    zh = next(c for c in imported["all-zh"] if c["qid"] == "view-lite" and c["ord"] == 0)
    assert "ZH-HIDDEN-MARKER" not in zh["front"] and "ZH-HIDDEN-MARKER" in zh["back"]
    assert "view() 什么时候会失败？" in zh["front"] and "When does" not in zh["front"]


def test_a_cross_reference_on_a_card_names_its_question(imported):
    for lang in ("zh", "en", "bi"):
        cards = imported[f"all-{lang}"]
        assert not any("{ref}" in c["back"] or "{ref}" in c["front"] for c in cards), lang
        card = next(c for c in cards if c["qid"] == "view-lite" and c["ord"] == 1)
        assert "grad-lite" in card["back"] or "Backpropagation" in card["back"] \
            or "反向传播求导" in card["back"], lang


def test_a_fact_card_asks_what_verified_code_does(imported):
    card = next(c for c in imported["all-en"] if c["qid"] == "view-lite"
                and c["template"] == "Fact 1")
    assert "RAISES_SNIPPET_MARKER" in card["front"] and 'class="code highlight' in card["front"]
    assert "RuntimeError" not in card["front"]
    assert "RuntimeError" in card["back"] and "view size is not compatible" in card["back"]
    printed = next(c for c in imported["all-en"] if c["qid"] == "grad-lite"
                   and c["template"] == "Fact 1")
    assert "6.0" in printed["back"] and "6.0" not in printed["front"]


def test_coding_tasks_are_a_subdeck_of_their_own(imported):
    cards = imported["advanced-en"]
    decks = {c["qid"]: c["deck"] for c in cards}
    assert decks == {"view-lite": "Card Test Bank::Advanced::Concepts",
                     "softmax-task": "Card Test Bank::Advanced::Coding tasks"}
    bi = {c["deck"] for c in imported["advanced-bi"]}
    assert bi == {"卡片测试题库 / Card Test Bank::高级 / Advanced::概念 / Concepts",
                  "卡片测试题库 / Card Test Bank::高级 / Advanced::编程题 / Coding tasks"}
    assert "STARTER_CODE_MARKER" in next(c for c in cards if c["qid"] == "softmax-task")[
        "answer"], "a task's Extra holds its question and starter code too"


def test_bilingual_cards_carry_code_and_labels_once(imported):
    cards = {(c["qid"], c["template"]): c for c in imported["all-bi"]}
    point = cards[("view-lite", "Point 1")]
    assert "ZH-ANSWER-MARKER" in point["answer"] and "EN-ANSWER-MARKER" in point["answer"]
    for marker in ("SAME_ANSWER_TEXT_CODE", "LONG_LINE_MARKER", "RAISES_SNIPPET_MARKER"):
        assert point["answer"].count(f'{marker} <span class="o">=</span>') == 1, marker
    assert point["answer"].index("ZH-AFTER-CODE-MARKER") < point["answer"].index(
        "EN-ANSWER-MARKER"), "the English text follows the Chinese, code is not repeated"
    assert point["answer"].count("Reference answer") == 1
    assert point["answer"].count("参考答案") == 1
    fact = cards[("view-lite", "Fact 1")]
    assigned = 'RAISES_SNIPPET_MARKER <span class="o">=</span>'
    assert fact["front"].count(assigned) == 1 and fact["back"].count(assigned) == 1
    assert fact["front"].count("What happens") == 1 and fact["front"].count("会怎样") == 1
    task = cards[("softmax-task", "Point 1")]
    assert task["answer"].count("STARTER_CODE_MARKER") == 1
    assert "Result: raises" in point["answer"] and point["answer"].count("运行结果") == 1
    assert "ZH-HIDDEN-MARKER" not in point["front"] and "EN-HIDDEN-MARKER" not in point["front"]
    assert "ZH-HIDDEN-MARKER" in point["back"] and "EN-HIDDEN-MARKER" in point["back"]


def test_content_is_data_on_cards(tmp_path: Path):
    build(RENDER, tmp_path, levels="all", langs="en")
    col = import_deck(tmp_path / "ptbank-all-en.apkg", tmp_path / "c.anki2")
    try:
        cards = cards_of(col)
    finally:
        col.close()
    hostile = [c for c in cards if c["qid"] == "hostile-markup"]
    assert hostile and all("<script>" not in c["answer"] for c in hostile)
    assert any("&lt;script&gt;" in c["front"] for c in hostile)
    assert hostile[0]["tags"] == ["ptbank::kind::concept", "ptbank::level::beginner",
                                  "ptbank::topic::tensors"]


@pytest.mark.parametrize("point, gap", [
    ("explains why generate_vmap_rule fails when forward calls NumPy (BatchedTensors have no "
     "storage)", "BatchedTensors have no storage"),
    ("view never copies; it changes shape and strides", "it changes shape and strides"),
    ("splits heads in order (e.g. view(B, T, H, D) + transpose(1, 2)), and knows a wrong "
     "order raises nothing", "and knows a wrong order raises nothing"),
    ("知道 hessian = jacfwd(jacrev)，或用 jvp(grad(f)) 求 Hessian-向量积",
     "或用 jvp(grad(f)) 求 Hessian-向量积"),
    ("knows `torch.nn.functional.pad(x, (1, 1))` and `F.unfold`", "`F.unfold`"),
    ("says why global-norm clipping cannot be done in this scheme",
     "cannot be done in this scheme"),
])
def test_a_point_is_cut_where_its_own_punctuation_says(point: str, gap: str):
    """Brackets and code spans hide the separators inside them; with none, the point's second
    half is the gap, cut between words."""
    cut = cloze(point)
    assert cut.gap == gap and cut.before + cut.gap + cut.after == point


def test_card_text_is_the_html_markdown_it_writes():
    """Plain points skip the parser (cards.inline): the HTML must be what it would write."""
    bank = load_bank(ROOT / "content")
    texts = [t for q in bank.questions for lang in ("zh", "en")
             for t in (q.text(lang).title, *q.text(lang).rubric)]
    texts += ["a `b` & <c>", "x_y and _z_", "**粗体**后面", "`` a`b ``", "1. not a list",
              "\\*"]
    for text in texts:
        flat = " ".join(text.split())
        assert str(inline(text)) == parser().renderInline(fix_cjk_emphasis(flat)), text


# --- the numbers, on the bank itself ----------------------------------------------------------

def test_the_advanced_decks_of_the_bank_have_short_backs(tmp_path: Path):
    """Today's bank: a card per idea, and backs that fit a phone screen (one card per
    question held backs of 12k-98k characters of HTML, up to 25 phone screens)."""
    build(ROOT / "content", tmp_path, levels="advanced")
    bank = load_bank(ROOT / "content")
    advanced = [q for q in bank.questions if q.level is Level.advanced]
    numbers = {}
    for lang, most, most_text in (("zh", 2500, 1000), ("en", 2500, 1000), ("bi", 3000, 1200)):
        col = import_deck(tmp_path / f"ptbank-advanced-{lang}.apkg",
                          tmp_path / f"{lang}.anki2")
        try:
            cards = cards_of(col)
        finally:
            col.close()
        points = [c for c in cards if c["template"].startswith("Point")]
        assert len(points) == sum(len(q.en.rubric) for q in advanced)
        coding = {q.id for q in advanced if q.kind is Kind.coding}
        assert all(("Coding" in c["deck"] or "编程题" in c["deck"]) == (c["qid"] in coding)
                   for c in cards)
        backs = [len(c["back"]) for c in cards]
        texts = [len(visible_text(c["back"])) for c in cards]
        numbers[lang] = {"cards": len(cards), "notes": len({c["guid"] for c in cards}),
                         "back": (statistics.median(backs), max(backs)),
                         "text": (statistics.median(texts), max(texts))}
        assert max(backs) <= most and max(texts) <= most_text, (lang, numbers[lang])
        assert statistics.median(backs) <= most / 2, (lang, numbers[lang])
    print("\nadvanced decks, backs in characters of HTML and of text (median, largest):",
          numbers)


def visible_text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


# --- identity --------------------------------------------------------------------------------

def edited_fixture(tmp_path: Path, edits: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of the card fixture with each (old, new) of `edits[question id]` replaced."""
    content = tmp_path / "content"
    shutil.copytree(CARDS, content)
    for qid, replacements in edits.items():
        path = content / "tensors" / f"{qid}.yaml"
        text = path.read_text("utf-8")
        for old, new in replacements:
            assert old in text, old
            text = text.replace(old, new)
        path.write_text(text, "utf-8")
    return content


def test_a_typo_fix_keeps_every_card_and_its_review_history(tmp_path: Path):
    build(CARDS, tmp_path / "a", levels="all", langs="en,bi")
    content = edited_fixture(tmp_path, {"view-lite": [
        ("shares storage", "shares the storage"),
        ("never copies; it only", "never copies: it only")]})
    build(content, tmp_path / "b", levels="all", langs="en,bi", epoch=EPOCH + 86400)
    for lang in ("en", "bi"):
        collection = tmp_path / f"{lang}.anki2"
        col = import_deck(tmp_path / "a" / f"ptbank-all-{lang}.apkg", collection)
        try:
            before = cards_of(col)
            reviewed = before[0]
            card = col.get_card(reviewed["id"])
            card.start_timer()
            col.sched.answerCard(card, 3)  # "Good": the card now has a review
        finally:
            col.close()
        fresh = import_deck(tmp_path / "b" / f"ptbank-all-{lang}.apkg",
                            tmp_path / f"{lang}-fresh.anki2")
        try:
            rebuilt = cards_of(fresh)
        finally:
            fresh.close()
        assert sorted((c["guid"], c["ord"]) for c in rebuilt) == \
            sorted((c["guid"], c["ord"]) for c in before), "the same GUIDs in a new build"
        col = import_deck(tmp_path / "b" / f"ptbank-all-{lang}.apkg", collection)
        try:
            after = cards_of(col)
            history = col.db.scalar("select count() from revlog where cid = ?", reviewed["id"])
        finally:
            col.close()
        assert [(c["id"], c["guid"], c["ord"]) for c in after] == \
            [(c["id"], c["guid"], c["ord"]) for c in before], "no card is new or gone"
        assert history == 1 and next(c for c in after if c["id"] == reviewed["id"])["reps"] == 1
        edited = next(c for c in after if c["qid"] == "view-lite" and c["ord"] == 0)
        assert "shares the storage" in edited["front"], "the fix reached the card"


def test_a_removed_idea_loses_its_card_and_an_added_one_gains_one(tmp_path: Path):
    build(CARDS, tmp_path / "a", levels="all", langs="en")
    content = edited_fixture(tmp_path, {
        "grad-lite": [("[说出导数是 2x, 算出 6]", "[说出导数是 2x]"),
                      ("[says the derivative is 2x, computes 6]", "[says the derivative is 2x]")],
        "view-lite": [("bonus: [3]", "bonus: [3, 4]"),
                      ("  hints: [转置后的步长是什么？]",
                       "    - 知道 reshape 何时拷贝\n  hints: [转置后的步长是什么？]"),
                      ("  hints: [What are the strides after a transpose?]",
                       "    - knows when reshape copies\n"
                       "  hints: [What are the strides after a transpose?]")]})
    build(content, tmp_path / "b", levels="all", langs="en")
    identities = []
    for name in ("a", "b"):
        col = import_deck(tmp_path / name / "ptbank-all-en.apkg",
                          tmp_path / f"{name}.anki2")
        try:
            identities.append({(c["guid"], c["ord"]): c["qid"] for c in cards_of(col)})
        finally:
            col.close()
    before, after = identities
    assert sorted(before.items() - after.items(), key=str) == \
        [(k, "grad-lite") for k in before if before[k] == "grad-lite" and k[1] == 1]
    added = after.keys() - before.keys()
    assert [(after[k], k[1]) for k in added] == [("view-lite", 3)]


def test_the_same_input_gives_the_same_bytes(tmp_path: Path):
    build(CARDS, tmp_path / "a")
    build(CARDS, tmp_path / "b")
    for name in ("ptbank-all-zh.apkg", "ptbank-advanced-bi.apkg"):
        assert (tmp_path / "a" / name).read_bytes() == \
            (tmp_path / "b" / name).read_bytes()
    with zipfile.ZipFile(tmp_path / "a" / "ptbank-all-zh.apkg") as archive:
        assert sorted(archive.namelist()) == ["collection.anki2", "media"]


def test_building_decks_leaves_no_file_in_the_temporary_folder(tmp_path: Path):
    """genanki's own write_to_file leaves its SQLite file in /tmp after every deck."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH), "TMPDIR": str(scratch)}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(RENDER),
                             "--format", "anki", "--lang", "zh,bi", "--draft", "--out",
                             str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        ".state", "ptbank-all-bi.apkg", "ptbank-all-zh.apkg"], \
        "--out names the folder the decks go into"
    assert list(scratch.iterdir()) == []


def test_the_old_one_card_decks_are_not_mistaken_for_these(decks: Path, tmp_path: Path):
    """A note's GUID names its note type too: importing these over the one-card-per-question
    decks adds notes of the new type instead of failing to map their fields."""
    db_path = tmp_path / "collection.anki2"
    with zipfile.ZipFile(decks / "ptbank-all-en.apkg") as archive:
        db_path.write_bytes(archive.read("collection.anki2"))
    db = sqlite3.connect(db_path)
    try:
        guids = [row[0] for row in db.execute("select guid from notes")]
    finally:
        db.close()
    import genanki
    old = {genanki.guid_for("ptbank", q, "en") for q in ("view-lite", "grad-lite")}
    assert guids and not old & set(guids)


# --- on a phone, by day and by night ---------------------------------------------------------

def card_page(styled: str, root: str) -> str:
    """A card as Anki's reviewer shows it: its HTML (with the note type's CSS) in a body of
    class `card`, and the night-mode classes where `root` names them."""
    return (f'<!doctype html><html class="{root}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f'<body class="card card1 {root}">{styled}</body></html>')


COLOURS = """() => {
  const of = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const s = getComputedStyle(e); return [s.color, s.backgroundColor]; };
  return {body: of('body'), pre: of('pre.code'), keyword: of('pre.code .kn, pre.code .k'),
          inline: of('p code, li code, .point code'), mark: of('mark')};
}"""


def luminance(rgb: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", rgb)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_night_mode_changes_the_colours_and_both_stay_readable(imported, browser, tmp_path):
    card = next(c for c in imported["all-en"] if c["qid"] == "view-lite"
                and c["template"] == "Fact 1")
    page = browser.new_page(viewport={"width": 390, "height": 844})
    seen = {}
    for root in ("", "nightMode", "night_mode"):
        target = tmp_path / f"card-{root or 'day'}.html"
        target.write_text(card_page(card["styled"], root), "utf-8")
        page.goto(target.as_uri())
        seen[root] = page.evaluate(COLOURS)
    page.close()
    day, night = seen[""], seen["nightMode"]
    assert seen["night_mode"] == night, "AnkiDroid's class does what the desktop's does"
    for part in ("body", "pre", "keyword"):
        assert night[part] != day[part], part
    body_bg = {"day": day["body"][1], "night": night["body"][1]}
    assert luminance(body_bg["night"]) < 0.05 < 0.8 < luminance(body_bg["day"])
    for mode, colours in (("day", day), ("night", night)):
        assert contrast(*colours["body"]) >= 7, (mode, colours["body"])
        assert contrast(colours["keyword"][0], colours["pre"][1]) >= 4.5, (mode, colours)


def test_on_a_phone_inline_code_wraps_and_code_blocks_scroll_inside_the_card(
        imported, browser, tmp_path):
    cards = {(c["qid"], c["template"]): c for c in imported["all-en"]}
    page = browser.new_page(viewport={"width": 390, "height": 844})
    target = tmp_path / "point.html"
    target.write_text(card_page(cards[("view-lite", "Point 3")]["styled"], ""), "utf-8")
    page.goto(target.as_uri())
    page.click("details summary")  # the Extra opened: the long code line is in it
    sizes = page.evaluate("""() => ({
      page: document.documentElement.scrollWidth,
      code: [...document.querySelectorAll('.point code')]
              .map(e => e.getBoundingClientRect().right),
      pre: [...document.querySelectorAll('pre.code')].map(e => [e.scrollWidth, e.clientWidth,
            getComputedStyle(e).overflowX])})""")
    page.close()
    assert sizes["page"] <= 390, "nothing runs off the edge of the screen"
    assert sizes["code"] and max(sizes["code"]) <= 390, "long inline code wraps"
    assert any(scroll > client and overflow == "auto" for scroll, client, overflow
               in sizes["pre"]), "a long line scrolls inside its code block"


def test_a_card_of_a_parametrized_question_gives_the_inputs_its_numbers_follow_from(
        tmp_path: Path, imported):
    """"States the formula and gets 32" asks for a number: the front says from what (the
    canonical variant's inputs), as the question folded into the Extra does."""
    content = ROOT / "tests" / "fixtures" / "variants"
    build(content, tmp_path, levels="all", langs="en,bi")
    for lang, given in (("en", "Given:"), ("bi", "已知 / Given:")):
        col = import_deck(tmp_path / f"ptbank-all-{lang}.apkg", tmp_path / f"{lang}.anki2")
        try:
            cards = cards_of(col)
        finally:
            col.close()
        conv = [c["front"] for c in cards if c["qid"] == "conv-output-shape"]
        assert conv and all(given in front for front in conv)
        for value in ("size = 64", "kernel = 3", "stride = 2"):
            assert all(f"<code>{value}</code>" in front for front in conv)
    plain = [c["front"] for c in imported["all-en"]]     # a bank without parameters
    assert plain and not any("Given" in front for front in plain)

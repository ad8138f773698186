"""Cross-references between questions: {ref}`id` is checked by lint and printed as the
target's number and title, a link where the edition holds it, else with its level; question
numbers are the whole bank's in every edition."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ptbank.lint import lint
from ptbank.loader import load_bank
from ptbank.pipeline import bank_document
from ptbank.render.html import render_html

RENDER = Path(__file__).parent / "fixtures" / "render"


def _bank_with(tmp_path: Path, zh: str, en: str) -> Path:
    """The render fixture, grad-basics' answers replaced by `zh` and `en`."""
    root = tmp_path / "content"
    shutil.copytree(RENDER, root)
    path = root / "autograd" / "grad-basics.yaml"
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^  answer: 梯度是.*$", lambda _: f"  answer: '{zh}'", text, flags=re.M)
    text = re.sub(r"^  answer: The gradient.*$", lambda _: f"  answer: '{en}'", text,
                  flags=re.M)
    path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def referring(tmp_path) -> Path:
    return _bank_with(tmp_path, "梯度是 6，长代码见 {ref}`long-code`。",
                      "The gradient is 6; for long code see {ref}`long-code`.")


def _messages(root: Path) -> list[str]:
    bank = load_bank(root)
    return [str(problem) for problem in lint(bank)]


def test_a_reference_to_a_question_of_the_bank_passes_lint(referring):
    assert not [m for m in _messages(referring) if "refer" in m or "{ref}" in m]


@pytest.mark.parametrize("zh, en, expected", [
    ("见 {ref}`no-such-question`。", "See {ref}`no-such-question`.",
     "en.answer: {ref}`no-such-question` names no question of this bank"),
    ("见 `long-code`。", "See `long-code`.",
     "refers the reader to `long-code` as code: write {ref}`long-code`"),
    ("见 {ref}`long-code`。", "See {ref}`hostile-markup`.",
     "zh and en refer to different questions: only zh: long-code; only en: hostile-markup"),
])
def test_lint_refuses_missing_targets_bare_ids_and_languages_that_differ(tmp_path, zh, en,
                                                                         expected):
    messages = _messages(_bank_with(tmp_path, zh, en))
    assert any(expected in m and "grad-basics.yaml:" in m for m in messages), messages


def test_in_the_edition_a_reference_is_a_link_to_the_question(referring):
    bank = load_bank(referring)
    doc, markdown = bank_document(bank, "all", "en", True, None)
    target = doc.item_of("long-code")
    assert f'see [{target.number} Long code](#{target.anchor} "long-code")' in markdown.replace(
        doc.references["long-code"].titles["en"], "Long code")
    html = render_html(markdown, doc)
    assert f'href="#{target.anchor}"' in html and f'id="{target.anchor}"' in html


def test_outside_the_edition_a_reference_names_the_level_it_is_in(referring):
    bank = load_bank(referring)
    number = bank_document(bank, "all", "en", True, None)[0].item_of("long-code").number
    title = {lang: next(q for q in bank.questions if q.id == "long-code").text(lang).title
             for lang in ("zh", "en")}
    doc, markdown = bank_document(bank, "intermediate", "en", True, None)
    assert doc.item_of("long-code") is None
    assert f"see {number} {title['en']} (in the advanced bank)." in markdown
    _, markdown_zh = bank_document(bank, "intermediate", "zh", True, None)
    assert f"长代码见 {number} {title['zh']}（在高级题库中）。" in markdown_zh


def test_a_question_has_the_same_number_in_every_edition(referring):
    bank = load_bank(referring)
    numbers = {}
    for level in ("beginner", "intermediate", "advanced", "all"):
        for lang in ("zh", "en", "bi"):
            doc, _ = bank_document(bank, level, lang, True, None)
            for section in doc.sections:
                for item in section.items:
                    numbers.setdefault(item.question.id, set()).add(item.number)
    assert all(len(found) == 1 for found in numbers.values()), numbers
    assert len({n for found in numbers.values() for n in found}) == len(bank.questions)


def test_on_the_site_a_reference_links_to_the_question_s_own_page(referring, tmp_path):
    from ptbank.cli import main

    assert main(["build", "--content", str(referring), "--format", "html", "--lang", "en",
                 "--draft", "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "en" / "autograd" / "grad-basics.html").read_text(
        encoding="utf-8")
    assert 'href="../tensors/long-code.html"' in page
    assert "page-number" not in page and "000" not in page, "a page number only where pages are"
    assert (tmp_path / "out" / "en" / "tensors" / "long-code.html").is_file()

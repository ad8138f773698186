"""A long PDF laid out in parts and merged (render/pdf_parts.py) prints as the whole would."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from pypdf import PdfReader

from ptbank.loader import load_bank
from ptbank.pipeline import bank_document
from ptbank.render.html import markdown_to_html_chapters
from ptbank.render.pdf import render_pdf
from ptbank.render.part_cache import PartCache
from ptbank.render.pdf_parts import PART_CHARS, plan_parts

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EPOCH = "1764460800"


@pytest.fixture(scope="module")
def whole_and_parts(tmp_path_factory) -> dict:
    """The render fixture's bilingual answer key laid out whole, and in parts of one chapter
    (the title page and contents, then each topic): cold, cold again, from the warm part
    cache, with two processes, and after an edit of one question, each page laid out
    recorded."""
    from ptbank import workers
    from ptbank.render import pdf

    out = tmp_path_factory.mktemp("parts")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    bank = load_bank(FIXTURES / "render")
    doc, markdown = bank_document(bank, "all", "bi", True, None)
    edited = markdown.replace(EDITED_FROM, EDITED_TO)
    assert edited.count(EDITED_TO) == 1
    laid_out: dict[str, list[str]] = {}
    lay_out_page, process_pool = pdf.lay_out_page, workers.process_pool
    pools: dict[str, list[int]] = {}
    result = {"chapters": len(markdown_to_html_chapters(markdown, doc.langs)), "out": out}
    runs = (("whole", markdown, None, 1, "whole"), ("parts", markdown, PART_CHARS, 1, "a"),
            ("again", markdown, PART_CHARS, 1, "b"), ("warm", markdown, PART_CHARS, 1, "a"),
            ("parallel", markdown, PART_CHARS, 2, "c"), ("edited", edited, PART_CHARS, 1, "a"),
            ("edited-cold", edited, PART_CHARS, 1, "d"))
    try:
        for name, text, part_chars, jobs, cache in runs:
            laid_out[name], pools[name] = [], []
            monkeypatch.setattr(workers, "process_pool", lambda size, _n=name: (
                pools[_n].append(size), process_pool(size))[1])
            # a pool's workers are sent lay_out_page by name: a recording stand-in cannot go
            monkeypatch.setattr(pdf, "lay_out_page", lay_out_page if jobs > 1 else (
                lambda html, *a, _n=name: (laid_out[_n].append(html), lay_out_page(html, *a))[1]))
            render_pdf(text, doc, out / f"{name}.pdf", part_chars=part_chars, jobs=jobs,
                       cache=PartCache(out / f"cache-{cache}"))
            result[name] = out / f"{name}.pdf"
    finally:
        monkeypatch.undo()
    result["laid_out"], result["pools"] = laid_out, pools
    return result


EDITED_FROM = "The gradient is `2x`, that is 6."
EDITED_TO = "The gradient is `2x`, that is 6, as the edit says."


def _page_texts(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
    return text.split("\f")


def test_a_bank_document_is_laid_out_in_parts(whole_and_parts):
    topics = whole_and_parts["chapters"] - 2
    assert topics >= 2, "the fixture needs two topics to cut between"
    layouts = {name: len(pages) for name, pages in whole_and_parts["laid_out"].items()}
    assert layouts["whole"] == 1
    # a part per topic, the front laid out twice (its numbers settle), and once the layers
    # drawn over the merged pages: "page X of Y", and the cross-references' page numbers
    assert layouts["parts"] == layouts["again"] == topics + 4
    # the parallel print laid its chapters out in one pool of two workers; the serial none
    assert whole_and_parts["pools"]["parallel"] == [2]
    assert whole_and_parts["pools"]["parts"] == whole_and_parts["pools"]["again"] == []


def test_a_print_from_the_warm_cache_lays_out_nothing_and_gives_the_same_bytes(whole_and_parts):
    assert whole_and_parts["laid_out"]["warm"] == []
    assert whole_and_parts["warm"].read_bytes() == whole_and_parts["parts"].read_bytes()


def test_after_an_edit_only_its_chapter_is_laid_out_again(whole_and_parts):
    pages = whole_and_parts["laid_out"]["edited"]
    body = [page for page in pages if 'class="toc"' not in page and "<h2" in page]
    assert len(body) == 1 and "as the edit says" in body[0]
    assert len(pages) <= 1 + 2 + 2, "the chapter, at most two fronts and the two layers"
    assert (whole_and_parts["edited"].read_bytes()
            == whole_and_parts["edited-cold"].read_bytes()), "the same bytes as a cold print"
    assert whole_and_parts["edited"].read_bytes() != whole_and_parts["parts"].read_bytes()


def test_parts_laid_out_in_parallel_give_the_bytes_of_a_serial_print(whole_and_parts):
    assert whole_and_parts["parallel"].read_bytes() == whole_and_parts["parts"].read_bytes()


def test_the_cache_keeps_what_an_edition_last_used_and_prunes_the_rest(whole_and_parts):
    cache = PartCache(whole_and_parts["out"] / "cache-a")
    before = {p.stem for p in cache.root.glob("*.json")}
    assert cache.prune() >= 1, "the chapter as it was before the edit is no longer used"
    after = {p.stem for p in cache.root.glob("*.json")}
    assert after < before and after == {p.stem for p in cache.root.glob("*.pdf")}
    assert (whole_and_parts["out"] / "cache-a" / "uses").is_dir()
    # what is left prints the edited edition with no layout at all
    from ptbank.render import pdf
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        patch.setattr(pdf, "lay_out_page", lambda *a: calls.append(a))
        bank = load_bank(FIXTURES / "render")
        doc, markdown = bank_document(bank, "all", "bi", True, None)
        target = whole_and_parts["out"] / "after-prune.pdf"
        render_pdf(markdown.replace(EDITED_FROM, EDITED_TO), doc, target, cache=cache)
    assert calls == []
    assert target.read_bytes() == whole_and_parts["edited"].read_bytes()


def test_parts_merged_print_the_same_pages_as_the_whole(whole_and_parts, tmp_path: Path):
    whole, parts = whole_and_parts["whole"], whole_and_parts["parts"]
    assert _page_texts(parts) == _page_texts(whole), (
        "same text on every page: running header, 'page X of Y', contents' page numbers")
    for name in ("whole", "parts"):
        subprocess.run(["pdftoppm", "-png", "-r", "60", str(whole_and_parts[name]),
                        str(tmp_path / name)], check=True)
    shots = sorted(tmp_path.glob("whole-*.png"))
    assert len(shots) == len(PdfReader(whole).pages) >= 4
    for shot in shots:
        other = tmp_path / shot.name.replace("whole-", "parts-")
        difference = ImageChops.difference(Image.open(shot).convert("RGB"),
                                           Image.open(other).convert("RGB"))
        assert difference.getbbox() is None, f"page {shot.stem} looks different"


def test_cross_references_print_the_page_their_target_is_on(whole_and_parts):
    """The fixture's questions refer to each other across chapters (so across parts): each
    reference prints the page its target question starts on, laid out whole and in parts,
    with its closing parenthesis right after the number, though the room is for three digits
    ("(p. 5)", not "(p. 5  )")."""
    for name in ("whole", "parts"):
        pages = _page_texts(whole_and_parts[name])
        on_page = {target: next(n for n, text in enumerate(pages, 1) if start in text)
                   for target, start in (("grad", "What is the gradient of"),
                                         ("long", "The code line below is long"))}
        text = " ".join(" ".join(page.split()) for page in pages)
        printed = {
            "grad": re.findall(r"2\.1 Backpropagation \(p\. (\d+)\)", text)
            + re.findall(r"2\.1 反向传播求导（第 (\d+) 页）", text),
            "long": re.findall(r"cut off \(p\. (\d+)\)", text)
            + re.findall(r"不是被截断（第 (\d+) 页）", text)}
        assert on_page["grad"] > on_page["long"], "one reference forward, one back"
        for target, numbers in printed.items():
            assert numbers == [str(on_page[target])] * 2, (name, target, numbers)


def test_parts_merged_give_the_same_bytes_from_the_same_inputs(whole_and_parts):
    assert whole_and_parts["parts"].read_bytes() == whole_and_parts["again"].read_bytes()


def test_parts_merged_keep_links_outline_and_metadata(whole_and_parts):
    readers = {name: PdfReader(whole_and_parts[name]) for name in ("whole", "parts")}

    def outline(reader, items=None, depth=0):
        rows = []
        for item in reader.outline if items is None else items:
            if isinstance(item, list):
                rows += outline(reader, item, depth + 1)
            else:
                rows.append((depth, item.title, reader.get_destination_page_number(item),
                             round(float(item.top), 1)))
        return rows

    def destinations(reader):
        return {name: (reader.get_destination_page_number(d), round(float(d.top), 1))
                for name, d in reader.named_destinations.items()}

    def links(reader):
        return [sorted((str(a.get_object()["/Dest"]),
                        tuple(round(float(v), 1) for v in a.get_object()["/Rect"]))
                       for a in page.get("/Annots", []))
                for page in reader.pages]

    whole, parts = readers["whole"], readers["parts"]
    assert len(outline(whole)) > 5
    assert outline(parts) == outline(whole)
    assert destinations(parts) == destinations(whole)
    assert sum(map(len, links(whole))) > 5, "the contents link to every question"
    assert links(parts) == links(whole)
    assert parts.metadata == whole.metadata
    assert parts.trailer["/Root"]["/Lang"] == whole.trailer["/Root"]["/Lang"]


def test_parts_are_whole_chapters_unless_one_is_longer_than_a_part():
    chapters = [["a" * 30, "b" * 30], ["c" * 10], ["d" * 50, "e" * 50, "f" * 10], ["g" * 5]]
    parts = plan_parts(chapters, part_chars=70)
    assert [piece for part in parts for piece in part] == [p for c in chapters for p in c]
    assert parts == [["a" * 30, "b" * 30], ["c" * 10], ["d" * 50], ["e" * 50, "f" * 10],
                     ["g" * 5]]
    assert plan_parts([["x" * 500]], part_chars=70) == [["x" * 500]], "a piece is never cut"
    assert plan_parts([], part_chars=70) == [[]]


def test_a_long_pdf_counts_as_a_part_when_the_build_sizes_its_workers(monkeypatch):
    """Laid out in parts, the longest answer key needs no more memory than a part: the build
    may run two of them at once where available memory holds two parts."""
    from ptbank import workers
    from ptbank.artifacts import Artifact

    huge = [Artifact(Path(f"/tmp/{n}.pdf"), "pdf", "x" * 20_000_000, None) for n in range(2)]
    monkeypatch.setattr(workers, "available_memory",
                        lambda: workers.MEMORY_HEADROOM + 2 * workers.PDF_PEAK_BYTES_MAX)
    assert workers.pdf_workers(huge, wanted=2) == 2
    monkeypatch.setattr(workers, "available_memory",
                        lambda: workers.MEMORY_HEADROOM + workers.PDF_PEAK_BYTES_MAX)
    assert workers.pdf_workers(huge, wanted=2) == 1

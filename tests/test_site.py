"""The offline study site, driven in a real headless browser (Debian's chromium, by Playwright):
filters and search narrow the list, an answer unfolds, the language switch lands on the same
question, nothing is requested beyond file://, and pages fit a phone's width."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "render"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def build(out: Path, *more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(FIXTURE),
                             "--format", "html", "--lang", "zh,en,bi", "--draft", "--out",
                             str(out), *more], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build(out)
    return out / "site"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "chromium is missing: `make test` installs it (Debian package chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A page that records every request it makes."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    yield page
    page.close()


def visible_rows(page) -> list[str]:
    return page.eval_on_selector_all("#questions li:not([hidden]) a",
                                     "links => links.map(a => a.getAttribute('href'))")


def test_the_site_has_an_index_and_a_page_per_topic_in_each_language(site: Path):
    for lang in ("zh", "en", "bi"):
        assert sorted(p.name for p in (site / lang).iterdir()) == [
            "autograd.html", "index.html", "tensors.html"]
    assert 'href="zh/index.html"' in (site / "index.html").read_text("utf-8")


def test_filters_and_search_narrow_the_list(site: Path, page):
    page.goto((site / "en" / "index.html").as_uri())
    assert len(visible_rows(page)) == 3
    assert page.inner_text("#count") == "3 of 3 questions"
    page.select_option("#level", "intermediate")
    assert visible_rows(page) == ["autograd.html#grad-basics"]
    page.select_option("#level", "")
    page.select_option("#topic", "tensors")
    assert len(visible_rows(page)) == 2
    page.fill("#search", "wrap")
    assert visible_rows(page) == ["tensors.html#long-code"]
    assert page.inner_text("#count") == "1 of 3 questions"
    page.select_option("#topic", "")
    page.fill("#search", "反向")
    assert visible_rows(page) == [], "the English site searches English text"
    page.goto((site / "zh" / "index.html").as_uri())
    page.fill("#search", "反向")
    assert visible_rows(page) == ["autograd.html#grad-basics"]


def test_an_answer_is_folded_until_opened(site: Path, page):
    page.goto((site / "en" / "tensors.html").as_uri() + "#hostile-markup")
    answer = page.get_by_text("EN-ANSWER-MARKER")
    assert not answer.is_visible()
    page.locator("#hostile-markup details summary").first.click()
    assert answer.is_visible()
    # content is data: the question's <script> prints as text and never runs
    assert '<script>alert("en")</script>' in page.inner_text("#hostile-markup")


def test_the_bilingual_site_asks_in_both_languages_before_any_fold(site: Path, page):
    page.goto((site / "bi" / "tensors.html").as_uri() + "#hostile-markup")
    assert page.get_by_text("This text holds").is_visible()
    assert page.get_by_text("这段文字包含").is_visible()
    summaries = page.locator("#hostile-markup summary").all_inner_texts()
    assert summaries == ["参考答案 / Reference answer", "评分要点 / Rubric",
                         "追问 / Follow-up questions"]


def test_the_language_switch_lands_on_the_same_question(site: Path, page):
    page.goto((site / "zh" / "tensors.html").as_uri() + "#long-code")
    page.click("a.lang[data-lang=en]")
    page.wait_for_load_state()
    assert page.url.endswith("/en/tensors.html#long-code")
    box = page.locator("#long-code").bounding_box()
    assert 0 <= box["y"] < 900, "scrolled to the same question"
    page.click("a.lang[data-lang=bi]")
    page.wait_for_load_state()
    assert page.url.endswith("/bi/tensors.html#long-code")


def test_no_request_leaves_file_urls(site: Path, page):
    for lang in ("zh", "en", "bi"):
        for name in ("index.html", "tensors.html", "autograd.html"):
            page.goto((site / lang / name).as_uri())
            for summary in page.locator("summary").all():
                summary.click()
    assert page.requests and all(url.startswith("file://") for url in page.requests), [
        url for url in page.requests if not url.startswith("file://")]


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_at_desktop_and_phone_width_fit_the_screen(site: Path, browser, width,
                                                                tmp_path_factory):
    shots = tmp_path_factory.mktemp(f"screenshots-{width}")
    page = browser.new_page(viewport={"width": width, "height": 844})
    for lang in ("zh", "en"):
        for name in ("index.html", "tensors.html"):
            page.goto((site / lang / name).as_uri())
            if name != "index.html":
                page.locator("summary").first.click()
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (
                f"{lang}/{name} scrolls sideways at {width} px")
            path = shots / f"{lang}-{name}.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 5000
    page.close()


def test_the_site_is_rebuilt_only_when_it_changed_and_whole(tmp_path: Path):
    build(tmp_path)
    again = build(tmp_path)
    assert "0 written, 3 up to date" in again.stderr
    (tmp_path / "site" / "en" / "tensors.html").unlink()   # a damaged site is stale
    repaired = build(tmp_path)
    assert "1 written, 2 up to date" in repaired.stderr
    assert (tmp_path / "site" / "en" / "tensors.html").exists()
    assert not list((tmp_path / "site").glob(".*.part")), "no temporary folder left"


def test_questions_rendered_before_are_reused_but_never_stale(tmp_path: Path):
    """The render cache (build/cache/render/ under the working folder) holds each question's
    HTML by its Markdown: an edited question renders anew, a damaged entry is a miss."""
    content, work = tmp_path / "content", tmp_path / "work"
    shutil.copytree(FIXTURE, content)
    work.mkdir()

    def site(out: str) -> Path:
        env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
        done = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(content),
                               "--format", "html", "--lang", "en", "--draft", "--out", out],
                              cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return work / out / "site" / "en"

    first = site("a")
    store = work / "build" / "cache" / "render"
    entries = sorted(store.glob("*.json"))
    assert len(entries) == 3, "a question in one language is one entry"
    page = (first / "tensors.html").read_text("utf-8")
    for entry in entries:
        entry.write_text('{"asked": 5', "utf-8")       # damaged: each is a miss, rendered anew
    path = content / "autograd" / "grad-basics.yaml"
    path.write_text(path.read_text("utf-8").replace("What is", "What exactly is", 1), "utf-8")
    second = site("b")
    assert (second / "tensors.html").read_text("utf-8") == page
    assert "What exactly is" in (second / "autograd.html").read_text("utf-8")
    def whole(entry: Path) -> bool:
        try:
            return bool(json.loads(entry.read_text("utf-8"))["asked"])
        except ValueError:
            return False

    # the two unchanged questions rewritten, the edited one new; its old entry is unused
    assert sorted(whole(e) for e in store.glob("*.json")) == [False, True, True, True]

"""The offline study site, driven in a real headless browser (Debian's chromium, by Playwright),
from file://: the sidebar, the on-page contents and previous/next links navigate, a question's
own page loads it, full-text search finds words of answers and highlights them, `/` focuses
it, tags open their page, dark mode and "I know this" persist, copy buttons copy, the bilingual
site prints code once, pages fit a phone's width and print without an orphaned heading, and no
request leaves file:// (every test's page fails on one)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "render"
TAGS = {"tensors/hostile-markup.yaml": ["markup", "safety"],
        "tensors/long-code.yaml": ["markup", "printing"],
        "autograd/grad-basics.yaml": ["gradients"]}
"""Tags the site fixture's questions get (the render fixture has none)."""


def build(out: Path, *more: str, content: Path = FIXTURE) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    result = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(content),
                             "--format", "html", "--lang", "zh,en,bi", "--draft", "--out",
                             str(out), *more], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The render fixture, its questions tagged, built in zh, en and bi."""
    content = tmp_path_factory.mktemp("content") / "bank"
    shutil.copytree(FIXTURE, content)
    for name, tags in TAGS.items():
        with (content / name).open("a", encoding="utf-8") as file:
            file.write(f"tags: [{', '.join(tags)}]\n")
    out = tmp_path_factory.mktemp("site")
    build(out, content=content)
    return out


def new_page(browser, width: int = 1280, height: int = 900, **options):
    """A page in a context of its own that records every request and script error, and
    blocks (then fails the test on) any request that is not file://."""
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.requests, page.blocked, page.errors = [], [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))

    def route(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            page.blocked.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    return page


@pytest.fixture
def page(browser):
    page = new_page(browser)
    yield page
    blocked, errors = page.blocked, page.errors
    page.context.close()
    assert not blocked, f"requests beyond file://: {blocked}"
    assert not errors, f"script errors: {errors}"


def url(site: Path, path: str) -> str:
    return (site / path).as_uri()


def visible_rows(page) -> list[str]:
    return page.eval_on_selector_all("#questions li:not([hidden]) a.title",
                                     "links => links.map(a => a.getAttribute('href'))")


def test_the_site_has_an_index_a_page_per_topic_and_a_page_per_question(site: Path):
    """Was an index and a page per topic holding every question: now a question has its own
    page (tensors/long-code.html), the topic page lists them, and tags, about and the shared
    assets have files of their own."""
    for lang in ("zh", "en", "bi"):
        folder = site / lang
        assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
            "about.html", "assets/search-index.js", "assets/site.css", "assets/site.js",
            "autograd.html", "autograd/grad-basics.html", "index.html", "tags.html",
            "tensors.html", "tensors/hostile-markup.html", "tensors/long-code.html"]
    assert 'href="zh/index.html"' in (site / "index.html").read_text("utf-8")


def test_filters_and_search_narrow_the_list(site: Path, page):
    page.goto(url(site, "en/index.html"))
    assert len(visible_rows(page)) == 3
    assert page.inner_text("#count") == "3 of 3 questions"
    page.select_option("#level", "intermediate")
    assert visible_rows(page) == ["autograd/grad-basics.html"]
    page.select_option("#level", "")
    page.select_option("#topic", "tensors")
    assert len(visible_rows(page)) == 2
    page.fill("#search", "wrap")
    assert visible_rows(page) == ["tensors/long-code.html"]
    assert page.inner_text("#count") == "1 of 3 questions"
    page.select_option("#topic", "")
    page.fill("#search", "反向")
    assert visible_rows(page) == [], "the English site searches English text"
    page.goto(url(site, "zh/index.html"))
    page.fill("#search", "反向")
    assert visible_rows(page) == ["autograd/grad-basics.html"]


def test_the_index_opens_with_its_questions_and_keeps_the_stamp_in_the_footer(site: Path, page):
    page.goto(url(site, "en/index.html"))
    assert page.inner_text("h1") == "Render Test Bank"
    assert "3 questions in 2 topics" in page.inner_text("main .lead")
    assert page.locator("main .stamp").count() == 0, "no stamp above the questions"
    assert "DRAFT" in page.inner_text("footer")
    page.click("footer a[href='about.html']")
    assert page.url.endswith("/en/about.html")
    assert "DRAFT" in page.inner_text("main .stamp")


def test_sidebar_links_navigate_through_topics_and_their_questions(site: Path, page):
    page.goto(url(site, "en/index.html"))
    page.click("nav.sidebar a[href='autograd.html']")
    assert page.url.endswith("/en/autograd.html")
    assert page.inner_text("h1") == "2. Autograd"
    current = page.locator("nav.sidebar li.current")
    assert current.locator("a").first.get_attribute("aria-current") == "page"
    page.click("nav.sidebar a[href='autograd/grad-basics.html']")
    assert page.url.endswith("/en/autograd/grad-basics.html")
    page.click("nav.sidebar a[href='../tensors.html']")
    assert page.url.endswith("/en/tensors.html")
    assert page.locator("nav.sidebar li.current li").count() == 2, "its questions listed"


def test_previous_and_next_walk_the_bank_in_order(site: Path, page):
    page.goto(url(site, "en/tensors/hostile-markup.html"))
    assert page.locator("a[rel=prev]").count() == 0
    page.click("a[rel=next]")
    assert page.url.endswith("/en/tensors/long-code.html")
    page.click("a[rel=next]")
    assert page.url.endswith("/en/autograd/grad-basics.html"), "on into the next topic"
    assert page.locator("a[rel=next]").count() == 0
    page.click("a[rel=prev]")
    assert page.url.endswith("/en/tensors/long-code.html")


def test_a_question_page_url_loads_that_question_with_its_contents(site: Path, page):
    page.goto(url(site, "en/tensors/long-code.html"))
    assert page.inner_text("h1") == "1.2 Long code lines wrap instead of being cut off"
    assert page.title().startswith("1.2 Long code lines wrap")
    assert page.locator(".crumbs a").all_inner_texts() == ["Render Test Bank", "1. Tensors"]
    toc = page.locator("aside.toc a").all_inner_texts()
    assert toc[:3] == ["Question", "Reference answer", "Rubric"]
    rubric = page.locator("details#rubric")
    assert rubric.get_attribute("open") is None
    page.click("aside.toc a[href='#rubric']")
    assert rubric.get_attribute("open") is not None, "the contents open the part they name"


def test_an_old_topic_anchor_still_finds_the_question(site: Path, page):
    page.goto(url(site, "en/tensors.html") + "#long-code")
    assert page.locator("#long-code").is_visible()
    page.click("#long-code a.title")
    assert page.url.endswith("/en/tensors/long-code.html")


def test_the_language_switch_lands_on_the_same_question(site: Path, page):
    """Was on a topic page holding every question; a question has its own page now, and the
    switch keeps it (and, on a topic page, the entry an anchor points to)."""
    page.goto(url(site, "zh/tensors/long-code.html"))
    page.click("a.lang[data-lang=en]")
    page.wait_for_load_state()
    assert page.url.endswith("/en/tensors/long-code.html")
    page.click("a.lang[data-lang=bi]")
    page.wait_for_load_state()
    assert page.url.endswith("/bi/tensors/long-code.html")
    page.goto(url(site, "zh/tensors.html") + "#long-code")
    page.click("a.lang[data-lang=en]")
    page.wait_for_load_state()
    assert page.url.endswith("/en/tensors.html#long-code")
    box = page.locator("#long-code").bounding_box()
    assert 0 <= box["y"] < 900, "scrolled to the same question"


def test_an_answer_is_folded_until_opened(site: Path, page):
    page.goto(url(site, "en/tensors/hostile-markup.html"))
    answer = page.get_by_text("EN-ANSWER-MARKER")
    assert not answer.is_visible()
    page.locator("#hostile-markup details summary").first.click()
    assert answer.is_visible()
    # content is data: the question's <script> prints as text and never runs
    assert '<script>alert("en")</script>' in page.inner_text("#hostile-markup")


def test_the_bilingual_site_asks_in_both_languages_before_any_fold(site: Path, page):
    page.goto(url(site, "bi/tensors/hostile-markup.html"))
    assert page.get_by_text("This text holds").is_visible()
    assert page.get_by_text("这段文字包含").is_visible()
    summaries = page.locator("#hostile-markup summary").all_inner_texts()
    assert summaries == ["参考答案 / Reference answer", "评分要点 / Rubric",
                         "追问 / Follow-up questions"]


def test_the_bilingual_site_prints_code_and_labels_once(site: Path, page):
    page.goto(url(site, "bi/autograd/grad-basics.html"))
    for summary in page.locator("summary").all():
        summary.click()
    text = page.inner_text("main")
    assert page.locator("pre.code").count() == 2, "the snippet and its output, once each"
    assert text.count("x.grad.item()") == 1 and text.count("6.0") == 1
    assert text.count("输出") == 1 and "输出： / Output:" in text
    assert text.count("Intermediate") == 1 and "中级 / Intermediate" in page.inner_text(".meta")
    page.goto(url(site, "bi/tensors/hostile-markup.html"))
    for name in ("QUESTION_SNIPPET_MARKER", "ANSWER_SNIPPET_MARKER"):
        assert page.locator("pre.code", has_text=name).count() == 1, name
    # the answer's code follows both languages' answers
    page.click("details#answer summary")
    answer = page.inner_text("details#answer")
    assert answer.index("EN-ANSWER-MARKER") < answer.index("ANSWER_SNIPPET_MARKER = sum")


def _search(page, words: str) -> None:
    page.fill("#site-search", words)
    page.wait_for_selector("#search-results li")


def test_search_finds_a_word_only_in_an_answer_and_highlights_it(site: Path, page):
    page.goto(url(site, "en/autograd.html"))
    _search(page, "answer-marker")
    results = page.locator("#search-results li")
    assert results.count() == 1
    assert "1.1 Content is data" in results.first.inner_text()
    assert page.inner_text("#search-results li mark") == "ANSWER-MARKER"
    results.first.locator("a").click()
    assert page.url.split("#")[0].endswith("/en/tensors/hostile-markup.html")
    hit = page.locator("mark.hit").first
    assert hit.inner_text() == "ANSWER-MARKER" and hit.is_visible(), "its fold opened"
    _search(page, "answer_snippet_marker")                          # a name in the code
    assert "1.1" in page.inner_text("#search-results li")
    page.goto(url(site, "zh/index.html"))
    _search(page, "答案正文")
    assert page.inner_text("#search-results li mark") == "答案正文"
    page.fill("#site-search", "nothing-matches-this")
    page.wait_for_selector("#search-results .none")


def test_slash_focuses_the_search_box(site: Path, page):
    page.goto(url(site, "en/tensors/long-code.html"))
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "site-search"
    assert page.input_value("#site-search") == "", "the slash is not typed"
    page.keyboard.type("wrap")
    page.wait_for_selector("#search-results li")
    page.keyboard.press("Escape")
    assert not page.locator("#search-results").is_visible()


def test_a_tag_opens_its_page(site: Path, page):
    page.goto(url(site, "en/tensors/hostile-markup.html"))
    page.click(".meta a.tag:text('markup')")
    assert page.url.endswith("/en/tags.html#tag-markup")
    section = page.locator("section#tag-markup")
    assert section.is_visible()
    assert section.locator("li a").all_inner_texts() == [
        "1.1 Content is data: <script> and {{ x }}",
        "1.2 Long code lines wrap instead of being cut off"]
    assert not page.locator("section#tag-gradients").is_visible(), "only the chosen tag"
    page.click("a[href='tags.html']:text('All tags')")
    assert page.locator("section#tag-gradients").is_visible()


def _background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_dark_mode_toggles_colours_and_persists_after_reload(site: Path, page, browser):
    page.goto(url(site, "en/index.html"))
    light = _background(page)
    page.click("#theme")
    dark = _background(page)
    assert dark != light
    page.reload()
    assert _background(page) == dark
    page.goto(url(site, "en/tensors/long-code.html"))
    assert _background(page) == dark, "every page"
    page.click("#theme")
    assert _background(page) == light
    system_dark = new_page(browser, color_scheme="dark")
    system_dark.goto(url(site, "en/index.html"))
    assert _background(system_dark) == dark, "prefers-color-scheme, with no choice made"
    system_dark.context.close()


def test_a_copy_button_puts_the_code_in_the_clipboard(site: Path, browser):
    page = new_page(browser)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(url(site, "en/tensors/long-code.html"))
    page.click("details#answer summary")
    page.locator("pre.code").first.hover()
    page.click("pre.code >> nth=0 >> xpath=.. >> button.copy")
    page.wait_for_selector("button.copy.done")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith('value = "a fairly long string literal')
    assert copied.rstrip().endswith('assert value.endswith("TAIL")')
    assert page.inner_text("button.copy >> nth=0") == "Copied"
    page.context.close()


def test_i_know_this_persists_and_shows_in_the_lists(site: Path, page):
    page.goto(url(site, "en/tensors/long-code.html"))
    known = page.locator("#known")
    assert known.get_attribute("aria-pressed") == "false"
    known.click()
    _visit_until(page, url(site, "en/tensors/long-code.html"),
                 lambda: known.get_attribute("aria-pressed") == "true")
    assert "known" in page.get_attribute("nav.sidebar a[href='long-code.html']", "class")
    _visit_until(page, url(site, "en/tensors.html"),
                 lambda: "1 of 2 known" in page.inner_text(".progress"))
    assert "known" in page.get_attribute("#long-code", "class")
    _visit_until(page, url(site, "zh/index.html"),  # the question's, whatever the language
                 lambda: "known" in page.get_attribute("#questions li[data-id=long-code]",
                                                       "class"))


def _visit_until(page, address: str, shown, tries: int = 30) -> None:
    """Open `address` until `shown()` holds. Chromium hands a localStorage write on to other
    documents a moment after it is made: a page opened at once could read the store without
    it (a reload 1 run in 4, the topic page after that once in a full `make test`); a reader
    comes back later than that. Three seconds without it fail."""
    for _ in range(tries):
        page.goto(address)
        if shown():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{address}: not shown after {tries} visits")


def test_no_request_leaves_file_urls(site: Path, page):
    for lang in ("zh", "en", "bi"):
        for name in ("index.html", "tensors.html", "tensors/hostile-markup.html",
                     "autograd/grad-basics.html", "tags.html", "about.html"):
            page.goto(url(site, f"{lang}/{name}"))
            for summary in page.locator("summary").all():
                summary.click()
        _search(page, "grad")
    assert page.requests and all(u.startswith("file://") for u in page.requests), [
        u for u in page.requests if not u.startswith("file://")]
    script = (site / "en" / "assets" / "site.js").read_text("utf-8")
    assert not re.search(r"\bfetch\(|XMLHttpRequest|https?://", script)
    for path in (site / "en").rglob("*.html"):
        assert not re.search(r'(src|href)="(https?:)?//', path.read_text("utf-8")), path


def test_the_root_index_says_what_the_site_is(site: Path, page):
    page.goto(url(site, "index.html"))
    assert "ptbank" in page.inner_text("h1")
    assert "PyTorch" in page.inner_text("main")
    assert "3 PyTorch interview questions in 2 topics" in page.inner_text("main")
    links = page.locator("a.choice")
    assert links.count() == 3
    links.nth(1).click()
    assert page.url.endswith("/en/index.html")


def test_printing_a_question_puts_its_text_on_page_one(site: Path, browser, tmp_path: Path):
    from pypdf import PdfReader

    page = new_page(browser)
    page.goto(url(site, "en/tensors/hostile-markup.html"))
    pdf = PdfReader(io.BytesIO(page.pdf(format="A4")))
    first = pdf.pages[0].extract_text()
    assert "Content is data" in first and "This text holds" in first
    assert "EN-ANSWER-MARKER" in first, "answers unfold in print"
    assert "Search" not in first and "I know this" not in first, "no screen furniture"
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_at_desktop_and_phone_width_fit_the_screen(site: Path, browser, width,
                                                                tmp_path_factory):
    shots = tmp_path_factory.mktemp(f"screenshots-{width}")
    page = new_page(browser, width=width, height=844)
    for lang in ("zh", "en"):
        for name in ("index.html", "tensors.html", "tensors/long-code.html", "tags.html"):
            page.goto(url(site, f"{lang}/{name}"))
            if "/" in name:
                page.locator("summary").first.click()
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (
                f"{lang}/{name} scrolls sideways at {width} px")
            path = shots / f"{lang}-{name.replace('/', '-')}.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 5000
    if width < 800:
        assert not page.locator("nav.sidebar").is_visible(), "the sidebar folds away on a phone"
        page.click("#menu")
        page.locator("nav.sidebar").wait_for(state="visible")
        page.click("nav.sidebar a[href='autograd.html']")
        assert page.url.endswith("/en/autograd.html")
    assert not page.blocked
    page.context.close()


def test_the_site_is_rebuilt_only_when_it_changed_and_whole(tmp_path: Path):
    build(tmp_path)
    again = build(tmp_path)
    assert "0 written, 3 up to date" in again.stderr
    (tmp_path / "en" / "tensors.html").unlink()   # a damaged site is stale
    repaired = build(tmp_path)
    assert "1 written, 2 up to date" in repaired.stderr
    assert (tmp_path / "en" / "tensors.html").exists()
    assert not list(tmp_path.glob(".*.part")), "no temporary folder left"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".state", "bi", "en", "index.html", "zh"], "--out names the folder the site goes into"


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
        return work / out / "en"

    first = site("a")
    store = work / "build" / "cache" / "render"
    entries = sorted(store.glob("*.json"))
    assert len(entries) == 3, "a question in one language is one entry"
    page = (first / "tensors" / "long-code.html").read_text("utf-8")
    for entry in entries:
        entry.write_text('{"asked": 5', "utf-8")       # damaged: each is a miss, rendered anew
    path = content / "autograd" / "grad-basics.yaml"
    path.write_text(path.read_text("utf-8").replace("What is", "What exactly is", 1), "utf-8")
    second = site("b")
    assert (second / "tensors" / "long-code.html").read_text("utf-8") == page
    assert "What exactly is" in (second / "autograd" / "grad-basics.html").read_text("utf-8")
    def whole(entry: Path) -> bool:
        try:
            return bool(json.loads(entry.read_text("utf-8"))["asked"])
        except ValueError:
            return False

    # the two unchanged questions rewritten, the edited one new; its old entry is unused
    assert sorted(whole(e) for e in store.glob("*.json")) == [False, True, True, True]

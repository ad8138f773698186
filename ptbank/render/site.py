"""The offline study site: for one language (zh, en or bi), pages a candidate navigates as in
MkDocs Material or Quarto. The folder build/site/LANG/ holds:

- index.html: what the site is, the topics with their progress, and every question in a list
  with level, topic and text filters;
- TOPIC.html: a topic's questions, each a link to its page;
- TOPIC/ID.html: one question (a page that can be bookmarked): asked up front, its answer,
  rubric, checks and follow-ups folded (`<details>`) so a candidate can test themselves, an
  "I know this" button, the page's contents and links to the previous and next question;
- tags.html: every tag with its questions; about.html: the verification stamp, keyboard
  shortcuts and where progress is kept (the stamp is in every page's footer, not on top);
- assets/: one stylesheet, one script, and the search index (search-index.js: every title,
  question and answer, built here, loaded by a script tag when the search box is first used).

Every page carries a sidebar of the topics (and the current topic's questions), a full-text
search box (`/` focuses it), a dark-mode toggle and a language switch. Each question's HTML
comes from question_parts(), the print renderer's (content is data: no raw HTML), reshaped
for its page by site_views.py. Fonts are the system's and nothing is fetched, so the site
works from file:// and from any static host. The folder is written whole under a temporary
name (see atomic.py); the language chooser at build/site/index.html beside it is written
with it.
"""

from __future__ import annotations

import json
import re
from html import unescape as html_unescape
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup
from pygments.formatters import HtmlFormatter

from ..atomic import write_text_atomic
from .document import Document, Section
from .html import PYGMENTS_STYLE, blocks_to_html
from .labels import html_lang, label
from .markdown import TEMPLATES
from .mdparse import parse, top_level_blocks
from .questions import prepare
from .site_labels import site_label, site_label_in
from .site_views import QuestionView, meta_labels, question_view, search_entry

SITE_LANGS = ("zh", "en", "bi")
DARK_PYGMENTS_STYLE = "github-dark"
ASSETS = ("site.css", "site.js")
SEARCH_INDEX = "assets/search-index.js"


@dataclass(frozen=True)
class Topic:
    key: str
    section: Section
    views: tuple[QuestionView, ...]

    @property
    def path(self) -> str:
        return f"{self.key}.html"

    @cached_property
    def ids(self) -> str:
        """Its questions' ids, for the progress the script shows."""
        return " ".join(view.id for view in self.views)


def render_site(markdown: str, doc: Document, target: Path) -> None:
    """Write the site of `doc` (the whole bank in one language, with answers) into `target`.

    `markdown` is the answer key's Markdown; it is the artifact's fingerprint, and each
    question's part of it is rendered again, question by question (questions.py), to
    split it into pages.
    """
    prepare(doc, [item for section in doc.sections for item in section.items])
    topics = [_topic(doc, section) for section in doc.sections]
    views = [view for topic in topics for view in topic.views]
    common = _common(doc, topics)
    for topic in topics:
        (target / topic.key).mkdir(parents=True, exist_ok=True)
    sidebars: dict[tuple, str] = {}
    pages_of = {view.item.anchor: view.path for view in views}
    for path, template, context in _pages(topics, views):
        topic = context.get("topic")
        link = _linker(path)
        page = _templates().get_template(template).render(
            common, page_name=path, link=link,
            sidebar=_sidebar(sidebars, common, path, topic.key if topic else None), **context)
        (target / path).write_text(_to_pages(page, pages_of, link), encoding="utf-8")
    (target / "assets").mkdir(exist_ok=True)
    for name, text in (("site.css", _css()), ("site.js", _script())):
        (target / "assets" / name).write_text(text, encoding="utf-8")
    entries = [search_entry(doc, view) for view in views]
    (target / SEARCH_INDEX).write_text(
        "window.PTBANK_SEARCH = " + json.dumps(entries, ensure_ascii=False,
                                               separators=(",", ":")) + ";\n", "utf-8")
    write_text_atomic(target.parent / "index.html", _templates().get_template(
        "site-root.html.j2").render(site_langs=SITE_LANGS, version=doc.version, date=doc.date,
                                    n=len(views), m=len(topics), label=site_label))


def _pages(topics: list[Topic], views: list[QuestionView]) -> list[tuple[str, str, dict]]:
    """Every page of the site: (path, template, what the template is given for it)."""
    tags = sorted({tag for view in views for tag in view.item.question.tags})
    pages = [("index.html", "site-index.html.j2", {}),
             ("tags.html", "site-tags.html.j2", {"tags": [
                 (tag, [view for view in views if tag in view.item.question.tags])
                 for tag in tags]}),
             ("about.html", "site-about.html.j2", {})]
    pages += [(topic.path, "site-topic.html.j2", {"topic": topic}) for topic in topics]
    by_key = {topic.key: topic for topic in topics}
    pages += [(view.path, "site-question.html.j2",
               {"topic": by_key[view.topic], "view": view,
                "prev": views[i - 1] if i else None,
                "next": views[i + 1] if i + 1 < len(views) else None})
              for i, view in enumerate(views)]
    return pages


def _topic(doc: Document, section: Section) -> Topic:
    key = section.items[0].question.topic
    return Topic(key, section, tuple(question_view(doc, item, key, _practice(doc, item.question))
                                     for item in section.items))


def _common(doc: Document, topics: list[Topic]) -> dict:
    """What every page's template is given besides the page itself."""
    langs = doc.langs
    return {"doc": doc, "site_lang": "bi" if len(langs) == 2 else langs[0],
            "site_langs": SITE_LANGS, "topics": topics, "html_lang": html_lang(langs[0]),
            "label": lambda key, **values: site_label_in(langs, key, **values),
            "lang_name": lambda lang: label(lang if lang != "bi" else "zh", f"site_lang_{lang}"),
            "meta": lambda item: meta_labels(langs, item),
            "count": sum(len(topic.views) for topic in topics),
            "stamp": [Markup(_inline_html(line)) for line in doc.stamp_lines]}


def _sidebar(cache: dict, common: dict, page: str, topic: str | None) -> Markup:
    """The sidebar of `page` (in `topic`), its own link marked: rendered once per topic and
    folder, as it is most of a page's navigation."""
    folder = page.rpartition("/")[0]
    key = (folder, topic)
    if key not in cache:
        cache[key] = _templates().get_template("site-sidebar.html.j2").render(
            common, link=_linker(page), current=topic)
    own = f'<a href="{page.rpartition("/")[2]}"'
    return Markup(cache[key].replace(own, own + ' aria-current="page"', 1))


_IN_PAGE_LINK = re.compile(r'href="#([^"]+)"')


def _to_pages(page: str, pages_of: dict[str, str], link) -> str:
    """`page` with each link to a question's heading (a cross-reference, printed for one
    document holding every question) pointed at that question's own page."""
    def pointed(found: re.Match) -> str:
        path = pages_of.get(html_unescape(found.group(1)))
        return found.group(0) if path is None else f'href="{link(path)}"'
    return _IN_PAGE_LINK.sub(pointed, page)


def _linker(page: str):
    """`link(path)`: `path` (under the language's folder) relative to `page`."""
    folder = page.rpartition("/")[0]
    if not folder:
        return lambda path: path
    prefix = folder + "/"
    return lambda path: path[len(prefix):] if path.startswith(prefix) else "../" + path


def _practice(doc: Document, question) -> Markup | None:
    """The commands that practise a coding task, when its hidden test has numbered checks."""
    if not question.zh.checks:
        return None
    file = question.id.replace("-", "_") + ".py"
    lines = [label(lang, "practice_hint", task=question.id, file=file) for lang in doc.langs]
    return Markup("".join(
        f'<p class="practice" lang="{html_lang(lang)}">{_inline_html(line)}</p>'
        for lang, line in zip(doc.langs, lines)))


def _inline_html(markdown: str) -> str:
    """A stamp line (Markdown) as HTML without its paragraph."""
    html = blocks_to_html(top_level_blocks(parse(markdown)), {})
    return html.strip().removeprefix("<p>").removesuffix("</p>")


@lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                              undefined=jinja2.StrictUndefined, autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


@lru_cache(maxsize=1)
def _css() -> str:
    light = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_PYGMENTS_STYLE).get_style_defs('[data-theme="dark"] .highlight')
    return (TEMPLATES / "site.css").read_text("utf-8") + "\n/* Pygments */\n" + light + "\n" + dark


@lru_cache(maxsize=1)
def _script() -> str:
    return (TEMPLATES / "site.js").read_text("utf-8")

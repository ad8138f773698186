"""The offline study site: for one language (zh, en or bi), an index of every question with
level and topic filters and a text search, and a page per topic whose answers, rubric and
follow-ups are folded (`<details>`), so a candidate can test themselves.

Each question's Markdown comes from the same template macro as the printed answer key, and is
parsed by the same parser (content is data: no raw HTML) and highlighted with the same Pygments
style. Plain HTML: one stylesheet and one small script, inlined in every page, system fonts;
nothing is fetched, so it works from file:// and from any static host. The site's folder
(build/site/LANG/) is written whole under a temporary name (see atomic.py); the language
chooser at build/site/index.html beside it is written with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup
from pygments.formatters import HtmlFormatter

from ..atomic import write_text_atomic
from .document import Document, Item
from .html import PYGMENTS_STYLE, blocks_to_html
from .questions import prepare, question_parts
from .labels import html_lang, label, label_in
from .markdown import TEMPLATES
from .mdparse import parse, top_level_blocks

SITE_LANGS = ("zh", "en", "bi")


@dataclass(frozen=True)
class QuestionView:
    """One question as the site shows it."""

    item: Item
    topic: str
    shown: Markup
    """Title, meta line, question and its starter code."""
    folds: tuple[tuple[str, Markup], ...]
    """(summary, HTML) of each folded part: answer, rubric, follow-ups, checks."""
    search: str
    """Lower-cased text the search box matches: title, question, tags, topic."""
    practice: Markup | None = None
    """For a coding task that can be graded: how to practise it (`ptbank practice`)."""

    @property
    def id(self) -> str:
        return self.item.question.id


def render_site(markdown: str, doc: Document, target: Path) -> None:
    """Write the site of `doc` (the whole bank in one language, with answers) into `target`.

    `markdown` is the answer key's Markdown; it is the artifact's fingerprint, and each
    question's part of it is rendered again, question by question (questions.py), to
    split it into pages.
    """
    site_lang = "bi" if len(doc.langs) == 2 else doc.langs[0]
    prepare(doc, [item for section in doc.sections for item in section.items])
    topics = []
    for section in doc.sections:
        key = section.items[0].question.topic
        views = [_question_view(doc, item, key) for item in section.items]
        topics.append((key, section, views))
    common = {"doc": doc, "site_lang": site_lang, "site_langs": SITE_LANGS,
              "label": lambda key, **values: label_in(doc.langs, key, **values),
              "lang_name": lambda lang: label(lang if lang != "bi" else "zh", f"site_lang_{lang}"),
              "css": _css(), "script": _script(), "topics": topics,
              "html_lang": html_lang(doc.langs[0]),
              "stamp": [Markup(_inline_html(line)) for line in doc.stamp_lines]}
    page = _templates().get_template("site-page.html.j2")
    (target / "index.html").write_text(
        page.render(common, page_name="index.html", current=None),
        encoding="utf-8")
    for key, section, views in topics:
        (target / f"{key}.html").write_text(
            page.render(common, page_name=f"{key}.html",
                        current=(key, section, views)), encoding="utf-8")
    write_text_atomic(target.parent / "index.html", _templates().get_template(
        "site-root.html.j2").render(site_langs=SITE_LANGS, css=_css(),
                                    names={lang: label(lang if lang != "bi" else "zh",
                                                       f"site_lang_{lang}")
                                           for lang in SITE_LANGS}))


def _question_view(doc: Document, item: Item, topic: str) -> QuestionView:
    shown, folds = question_parts(doc, item)
    question = item.question
    words = [question.text(lang).title + " " + question.text(lang).question
             for lang in doc.langs]
    words += question.tags + [item.topic_name(lang) for lang in doc.langs]
    return QuestionView(item, topic, shown, tuple(folds),
                        " ".join(" ".join(words).lower().split()), _practice(doc, question))


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
def _css() -> Markup:
    pygments = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")
    return Markup(pygments + "\n" + (TEMPLATES / "site.css").read_text("utf-8"))


@lru_cache(maxsize=1)
def _script() -> Markup:
    return Markup((TEMPLATES / "site.js").read_text("utf-8"))

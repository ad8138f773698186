"""One question as the study site shows it on its own page, made from question_parts()' HTML:
the heading and meta line come out (the page prints them once, with links), each part gets an
id for the page's contents, the answer's bold lead-ins ("**Pitfalls**: ...") become entries
of those contents, and a bilingual question carries its code once: the snippets that end a
part in both languages follow both texts, and a block repeated inside the second language's
text points back to the first's.

The HTML is what the print renderer made from Markdown with raw HTML off, so its shape is
known: one top-level block per line start, `<pre>` never nested, a bilingual part's languages
in two `<div class="in-lang">` (questions.py).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cached_property

from markupsafe import Markup

from .document import Document, Item
from .labels import html_lang, label
from .questions import PART_KEYS, question_parts
from .site_labels import site_label, site_label_in

_HEADING = re.compile(r"<h3[^>]*>(.*?)</h3>\n", re.S)
_META = re.compile(r"<p><em>[^\n]*?</em></p>\n")
_TAGS = re.compile(r"<[^>]+>")
_LEAD_IN = re.compile(r"<p><strong>([^<\n]{1,48})</strong>")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_MARKUP = re.compile(r"\*\*|`|\||-{3,}")
"""What Markdown adds to the words: bold, code spans, table rules."""


@dataclass(frozen=True)
class Part:
    """A folded part of a question: answer, rubric, checks or follow-ups."""

    key: str
    """Its id on the page: answer, rubric, checks, follow-ups."""
    summary: str
    body: Markup


@dataclass(frozen=True)
class QuestionView:
    """One question as the site shows it."""

    item: Item
    topic: str
    titles: tuple[Markup, ...]
    """The title in each language, as HTML; the first with its number."""
    asked: Markup
    """The question and its starter code, without heading and meta line."""
    parts: tuple[Part, ...]
    lead_ins: tuple[tuple[str, str], ...]
    """(id, text) of the answer's bold lead-ins, for the page's contents."""
    filter_text: str
    """Lower-cased text the index's list filter matches: title, question, tags, topic."""
    practice: Markup | None = None
    """For a coding task that can be graded: how to practise it (`ptbank practice`)."""

    @property
    def id(self) -> str:
        return self.item.question.id

    @property
    def path(self) -> str:
        """The page's path under the language's folder."""
        return f"{self.topic}/{self.id}.html"

    @cached_property
    def title_text(self) -> str:
        """The first language's title as plain text (sidebar, pager, page title)."""
        return plain(self.titles[0])

    @cached_property
    def bare_title(self) -> str:
        """The first language's title without its number."""
        return self.title_text.removeprefix(self.item.number).strip()

    @cached_property
    def titles_text(self) -> str:
        """Every language's title as plain text, without the number (lists)."""
        return " / ".join([self.bare_title] + [plain(title) for title in self.titles[1:]])


def question_view(doc: Document, item: Item, topic: str, practice: Markup | None) -> QuestionView:
    langs = doc.langs
    shown, folds = question_parts(doc, item)
    titles, asked = [], []
    for segment in _segments(shown, langs):
        heading = _HEADING.match(segment)
        title = heading.group(1) if heading else item.number
        titles.append(Markup(title if not titles else title.removeprefix(item.number + " ")))
        segment = segment[heading.end():] if heading else segment
        meta = _META.match(segment)
        asked.append(segment[meta.end():] if meta else segment)
    part_keys = {site_label_in(langs, key): key for key in PART_KEYS}
    parts, lead_ins, counter = [], [], [0]
    for index, (summary, body) in enumerate(folds):
        key = part_keys.get(summary, f"part-{index + 1}").replace("_", "-")
        body = _code_once(body, langs, counter, item.question.id) if len(langs) == 2 else body
        if key == "answer":
            body, lead_ins = _mark_lead_ins(body)
        parts.append(Part(key, summary, Markup(body)))
    asked_html = _code_once(_join(asked, langs), langs, counter, item.question.id) \
        if len(langs) == 2 else asked[0]
    return QuestionView(item, topic, tuple(titles), Markup(asked_html), tuple(parts),
                        tuple(lead_ins), _filter_text(doc, item), practice)


def meta_labels(langs, item: Item) -> list[str]:
    """Level, kind and minutes, each once ("中级 / Intermediate" in a bilingual site)."""
    question = item.question
    return [site_label_in(langs, question.level.value), site_label_in(langs, question.kind.value),
            site_label_in(langs, "minutes", n=question.minutes)]


def plain(markup: str) -> str:
    """HTML as text: tags dropped, entities decoded, white space collapsed (each block of
    the renderer's HTML ends its line, so blocks stay apart)."""
    return " ".join(html.unescape(_TAGS.sub("", markup)).split())


def code_blocks(markup: str) -> list[tuple[int, int]]:
    """Where each `<pre>` block of `markup` starts and ends (with its newline)."""
    spans, start = [], markup.find("<pre")
    while start >= 0:
        end = markup.find("</pre>\n", start)
        if end < 0:
            break
        spans.append((start, end + 7))
        start = markup.find("<pre", end)
    return spans


def _segments(markup: str, langs) -> list[str]:
    """A part's HTML in each language (questions.py wraps each of a bilingual part's in an
    `in-lang` div); the whole of it for one language."""
    if len(langs) == 1:
        return [str(markup)]
    first, second = (f'<div class="in-lang" lang="{html_lang(lang)}">' for lang in langs)
    text = str(markup)
    middle = text.find("</div>" + second)
    if not text.startswith(first) or middle < 0 or not text.endswith("</div>"):
        return [text]
    return [text[len(first):middle], text[middle + len("</div>" + second):-len("</div>")]]


def _join(segments: list[str], langs, shared: str = "") -> str:
    if len(segments) == 1:
        return segments[0] + shared
    body = "".join(f'<div class="in-lang" lang="{html_lang(lang)}">{segment}</div>'
                   for lang, segment in zip(langs, segments))
    return body + (f'<div class="shared-code">{shared}</div>' if shared else "")


def _code_once(markup: str, langs, counter: list[int], qid: str) -> str:
    """A bilingual part with each code block once: the snippets ending both languages' text
    moved after both (their labels merged: "输出： / Output:"); a block the second language
    repeats inside its text replaced by a link to the first's."""
    segments = _segments(markup, langs)
    if len(segments) != 2:
        return str(markup)
    (first, first_tail), (second, second_tail) = (
        _split_tail(segment, lang) for segment, lang in zip(segments, langs))
    shared = ""
    if first_tail and [kind for kind, _ in first_tail] == [kind for kind, _ in second_tail] and all(
            kind == "label" or a == b for (kind, a), (_, b) in zip(first_tail, second_tail)):
        shared = "".join(a if kind == "code" else f'<p class="label">{a[3:-5]} / {b[3:-5]}</p>\n'
                         for (kind, a), (_, b) in zip(first_tail, second_tail))
    else:
        first, second = segments
    codes = {first[start:end] for start, end in code_blocks(first)}
    ids: dict[str, str] = {}
    pieces, at = [], 0
    for start, end in code_blocks(second) if codes else ():
        block = second[start:end]
        if block in codes:
            if block not in ids:
                counter[0] += 1
                ids[block] = f"{qid}-code-{counter[0]}"
            pieces += [second[at:start], f'<p class="code-ref"><a href="#{ids[block]}">\u2191 '
                       f'{site_label(langs[1], "site_code_above")}</a></p>\n']
            at = end
    second = "".join(pieces) + second[at:]
    for block, anchor in ids.items():
        first = first.replace(block, block.replace("<pre ", f'<pre id="{anchor}" ', 1), 1)
    return _join([first, second], langs, shared)


def _split_tail(segment: str, lang: str) -> tuple[str, list[tuple[str, str]]]:
    """A language's text and the snippet blocks that end it: code, and the labels the
    template prints with snippets (raises, output)."""
    raises = label(lang, "raises", exc="\0").split("\0")[0].replace("`", "").strip()
    output = label(lang, "output")
    tail: list[tuple[str, str]] = []
    rest = segment
    while True:
        if rest.endswith("</pre>\n"):
            start = rest.rfind("<pre")
            kind = "code"
        elif rest.endswith("</p>\n"):
            start = rest.rfind("<p>")
            words = plain(rest[start:])
            kind = "label" if words == output or (words.startswith(raises) and
                                                  len(words) < len(raises) + 120) else ""
        else:
            break
        if not kind or start < 0 or (start and rest[start - 1] != "\n"):
            break
        tail.insert(0, (kind, rest[start:]))
        rest = rest[:start]
    while tail and tail[0][0] == "label" and plain(tail[0][1]) != output:
        rest, tail = rest + tail[0][1], tail[1:]      # a raises line belongs to code before it
    if not any(kind == "code" for kind, _ in tail):
        return segment, []
    return rest, tail


def _mark_lead_ins(body: str) -> tuple[str, list[tuple[str, str]]]:
    """Ids on the answer's paragraphs that open with a bold lead-in, in its first language."""
    found: list[tuple[str, str]] = []
    first_end = body.find('</div><div class="in-lang"')
    head, rest = (body, "") if first_end < 0 else (body[:first_end], body[first_end:])

    def mark(match: re.Match) -> str:
        before = head[max(0, match.start() - 2):match.start()]
        if match.start() and not (before.endswith("\n") or before == '">'):
            return match.group()              # not a paragraph of its own: inside a list
        anchor = f"a-{len(found) + 1}"
        found.append((anchor, html.unescape(match.group(1)).strip().rstrip(":：.。")))
        return f'<p id="{anchor}"><strong>{match.group(1)}</strong>'

    return _LEAD_IN.sub(mark, head) + rest, found


def _filter_text(doc: Document, item: Item) -> str:
    question = item.question
    words = [question.text(lang).title + " " + question.text(lang).question for lang in doc.langs]
    words += question.tags + [item.topic_name(lang) for lang in doc.langs]
    return " ".join(" ".join(words).lower().split())


_TEXTS: dict[tuple[int, str], tuple[object, str]] = {}


def _search_text(question, lang: str) -> str:
    """A question's words in one language, once per process: the bilingual site's index
    holds both languages' (checked against the question object, as questions.py does)."""
    cached = _TEXTS.get((id(question), lang))
    if cached is None or cached[0] is not question:
        text = question.text(lang)
        words = " ".join([text.question, text.answer, *text.rubric, *text.checks,
                          *text.follow_ups])
        cached = (question, " ".join(_MARKUP.sub("", words).split()))
        if len(_TEXTS) > 8192:
            _TEXTS.clear()
        _TEXTS[(id(question), lang)] = cached
    return cached[1]


def search_entry(doc: Document, view: QuestionView) -> dict:
    """The question in the search index: its page, title, topic, level, tags, the text of its
    question, answer, rubric, checks and follow-ups (from the Markdown, its markup dropped)
    and the names in its code that the text does not already say."""
    question = view.item.question
    body = " ".join(_search_text(question, lang) for lang in doc.langs)
    said = set(body.lower().split())          # enough to leave out most names said in prose
    code = " ".join(s.code for s in view.item.snippets("question") + view.item.snippets("answer"))
    names = [name for name in dict.fromkeys(_WORD.findall(code)) if name.lower() not in said]
    return {"u": view.path, "n": view.item.number, "t": view.titles_text,
            "p": " / ".join(view.item.topic_name(lang) for lang in doc.langs),
            "l": site_label_in(doc.langs, question.level.value),
            "g": " ".join(question.tags), "b": body, "c": " ".join(names)}

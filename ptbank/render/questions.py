"""One question at a time, as HTML, for the formats that show questions singly (the study
site folds each answer, a flashcard puts it on the back): what is asked, then each part
behind it under its heading.

A question's HTML comes from the one-question template (the same macro as the printed answer
key) through the print renderer (html.py), and is cached by its Markdown: in memory, so the
decks of every level and the site's languages share it, and on disk (build/cache/render/),
so a later build renders only the questions that changed. What a build lacks is rendered in
parallel processes first (`prepare`): parsing and highlighting are most of the time these
formats take (bench/render.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from functools import lru_cache
from importlib.metadata import version
from multiprocessing import current_process, get_context
from pathlib import Path

from markupsafe import Markup

from ..atomic import write_text_atomic
from .document import Document, Item
from .html import blocks_to_html
from .labels import html_lang, label
from .markdown import render_markdown
from .mdparse import parse, top_level_blocks
from .text import inline_text

Parts = tuple[Markup, tuple[tuple[str, Markup], ...]]

PART_KEYS = ("answer", "rubric", "checks", "follow_ups")
"""The labels of the parts behind a question (templates/_question.md.j2's h4 headings)."""
CACHE_SIZE = 8192
PARALLEL_FROM = 64
"""Fewer questions to render than this are not worth starting processes for."""

STORE = Path("build/cache/render")
"""Rendered questions on disk, one JSON file per key (see `_key`); a damaged one is a miss."""
UNUSED_DAYS = 30
"""A rendered question no build has read or written for this long is pruned (prune_store)."""
RENDERER_SOURCES = ("html.py", "mdparse.py", "text.py", "questions.py")
"""The code between a question's Markdown and its HTML: a change to any re-renders all."""
RENDERER_PACKAGES = ("markdown-it-py", "mdit-py-plugins", "pygments")

_MARKDOWN: dict[tuple, tuple[object, str]] = {}
_PARTS: dict[str, Parts] = {}


def question_parts(doc: Document, item: Item) -> Parts:
    """One question with its answer, as HTML in two parts: what is asked (title, meta line,
    question, starter code) and each part behind it (answer, rubric, checks, follow-ups) as
    (heading, HTML).

    A bilingual document asks in both languages up front and gives each part in both under one
    heading ("参考答案 / Reference answer"). Each language is rendered alone, as its
    one-language document renders it, so the cache serves the bilingual view for free.
    """
    rendered = [(lang, _parts(_question_markdown(doc, item, lang))) for lang in doc.langs]
    if len(rendered) == 1:
        return rendered[0][1]
    asked = Markup("".join(_in_lang(lang, shown) for lang, (shown, _) in rendered))
    by_part: dict[str, tuple[list[str], list[str]]] = {}
    for lang, (_, parts) in rendered:
        keys = {label(lang, key): key for key in PART_KEYS}
        for heading, body in parts:
            headings, bodies = by_part.setdefault(keys.get(heading, heading), ([], []))
            headings.append(heading)
            bodies.append(_in_lang(lang, body))
    return asked, tuple((" / ".join(headings), Markup("".join(bodies)))
                        for headings, bodies in by_part.values())


def prepare(doc: Document, items: list[Item]) -> None:
    """Render every one of `items` (of `doc`) the cache lacks, spread over the CPU cores
    (forked processes: this one has imported no torch, and the children need none of its
    threads)."""
    missing = list(dict.fromkeys(
        markdown for item in items for lang in doc.langs
        if (markdown := _question_markdown(doc, item, lang)) not in _PARTS))
    stored = {markdown: parts for markdown in missing if (parts := _load(markdown))}
    _keep(_PARTS, stored)
    missing = [markdown for markdown in missing if markdown not in stored]
    workers = min(len(os.sched_getaffinity(0)), len(missing) // (PARALLEL_FROM // 2))
    if len(missing) < PARALLEL_FROM or workers < 2 or current_process().daemon:
        return  # question_parts renders them one by one (a pool's worker may not fork one)
    with get_context("fork").Pool(workers) as pool:
        done = pool.map(_render_parts, missing, chunksize=max(1, len(missing) // (workers * 4)))
    for markdown, parts in zip(missing, done):
        _save(markdown, parts)
    _keep(_PARTS, dict(zip(missing, done)))


def clear_caches(disk: bool = False) -> None:
    """Forget rendered questions: in this process, and with `disk` in the store too."""
    _MARKDOWN.clear()
    _PARTS.clear()
    if disk:
        for entry in STORE.glob("*.json"):
            entry.unlink(missing_ok=True)


def _question_markdown(doc: Document, item: Item, lang: str) -> str:
    """The one-question Markdown, rendered once per question, number, language and kind of
    document: the decks of every level show the same card.

    Keyed by the question object's identity, which is safe because the entry holds the object
    (its id cannot be reused while cached) and is checked against it."""
    key = (id(item.question), item.number, item.topic_name(lang), lang, doc.kind)
    cached = _MARKDOWN.get(key)
    if cached is None or cached[0] is not item.question:
        cached = (item.question, render_markdown("one-question.md.j2", doc, item=item, lang=lang))
        _keep(_MARKDOWN, {key: cached})
    return cached[1]


def _parts(markdown: str) -> Parts:
    parts = _PARTS.get(markdown) or _load(markdown)
    if parts is None:
        parts = _render_parts(markdown)
        _save(markdown, parts)
    _keep(_PARTS, {markdown: parts})
    return parts


def prune_store(unused_for_days: float = UNUSED_DAYS) -> int:
    """Delete the rendered questions no build has used for `unused_for_days`; return how many.
    A build touches every entry it reads or writes, so what is left is what recent builds of
    any edition used (a question edited away stops being touched)."""
    cutoff = time.time() - unused_for_days * 86400
    removed = 0
    for entry in STORE.glob("*.json"):
        try:
            if entry.stat().st_mtime < cutoff:
                entry.unlink()
                removed += 1
        except OSError:
            pass
    return removed


def _load(markdown: str) -> Parts | None:
    path = STORE / f"{_key(markdown)}.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        asked, parts = data["asked"], data["parts"]
        if isinstance(asked, str) and all(isinstance(h, str) and isinstance(b, str)
                                          for h, b in parts):
            os.utime(path)  # used by this build: kept by prune_store
            return Markup(asked), tuple((h, Markup(b)) for h, b in parts)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _save(markdown: str, parts: Parts) -> None:
    asked, behind = parts
    try:
        write_text_atomic(STORE / f"{_key(markdown)}.json",
                          json.dumps({"asked": asked, "parts": behind}, ensure_ascii=False))
    except OSError:
        pass  # a read-only or full disk costs the next build time, not this one its output


def _key(markdown: str) -> str:
    return hashlib.sha256(f"{_renderer_fingerprint()}\0{markdown}".encode()).hexdigest()


@lru_cache(maxsize=1)
def _renderer_fingerprint() -> str:
    here = Path(__file__).parent
    sources = [(here / name).read_bytes() for name in RENDERER_SOURCES]
    packages = [f"{name}=={version(name)}".encode() for name in RENDERER_PACKAGES]
    return hashlib.sha256(b"\0".join(sources + packages)).hexdigest()


def _keep(cache: dict, entries: dict) -> None:
    if len(cache) + len(entries) > CACHE_SIZE:
        cache.clear()
    cache.update(entries)


def _render_parts(markdown: str) -> Parts:
    env: dict = {}
    asked: list[list] = []
    parts: list[tuple[str, list[list]]] = []
    for block in top_level_blocks(parse(markdown)):
        head = block[0]
        if head.type == "heading_open" and head.tag == "h4":
            parts.append((inline_text(block[1].content), []))
        elif parts:
            parts[-1][1].append(block)
        else:
            asked.append(block)
    return (Markup(blocks_to_html(asked, env)),
            tuple((heading, Markup(blocks_to_html(blocks, env))) for heading, blocks in parts))


def _in_lang(lang: str, html: str) -> str:
    return f'<div class="in-lang" lang="{html_lang(lang)}">{html}</div>'

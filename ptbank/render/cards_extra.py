"""A flashcard's Extra: the whole question and answer, folded under every card of its note.

It is the HTML the study site shows (questions.py renders and caches it, per language). A
bilingual note gives each part in Chinese, then English, with its code once: the code after a
part's text (its snippets) follows both texts, each label beside it merged into one line
("运行结果：抛出 `RuntimeError` / Result: raises `RuntimeError`"), and a code block in the
English text that the Chinese already shows is left out with a line saying so.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .document import Document, Item
from .labels import html_lang, label
from .questions import PART_KEYS, question_parts

SAME_CODE = "The same code as above, printed once"
"""Where the English text had a code block the Chinese text above it shows."""
_PRE = re.compile(r'<pre class="code[^"]*"><code>.*?</code></pre>\n?', re.S)
_BLOCK = re.compile(r'<pre class="code[^"]*"><code>.*?</code></pre>|<p>.*?</p>', re.S)


def extra_html(doc: Document, item: Item) -> str:
    """The question (title, text, starter code) and every part behind it, each under its
    heading."""
    if len(doc.langs) == 1:
        asked, parts = question_parts(doc, item)
        return str(asked) + "".join(f"<h4>{heading}</h4>{body}" for heading, body in parts)
    rendered = tuple(question_parts(replace(doc, langs=(lang,)), item) for lang in doc.langs)
    key = tuple(map(id, rendered))  # the render cache's own objects: the same for every level
    cached = _BILINGUAL.get(key)
    if cached is None or cached[0] != rendered:
        if len(_BILINGUAL) >= 4096:
            _BILINGUAL.clear()
        cached = _BILINGUAL[key] = (rendered, _bilingual_extra(item, rendered))
    return cached[1]


_BILINGUAL: dict[tuple, tuple] = {}
"""Bilingual Extras by the identity of the parts they were made of (held, so the ids stay
theirs; compared, so a reused id is a miss)."""


def _bilingual_extra(item: Item, rendered: tuple) -> str:
    views = {lang: _plain(parts) for lang, parts in zip(("zh", "en"), rendered)}
    zh_asked, en_asked = views["zh"][0], views["en"][0]
    html = [_bilingual(zh_asked, en_asked, item.snippets("question"))]
    parts = {lang: {_key(lang, heading): (heading, body) for heading, body in view[1]}
             for lang, view in views.items()}
    for key in dict.fromkeys([*parts["zh"], *parts["en"]]):
        found = [parts[lang][key] for lang in ("zh", "en") if key in parts[lang]]
        heading = " / ".join(h for h, _ in found)
        if len(found) == 2:
            snippets = item.snippets("answer") if key == "answer" else []
            body = _bilingual(found[0][1], found[1][1], snippets)
        else:
            lang = "zh" if key in parts["zh"] else "en"
            body = _in_lang(lang, found[0][1])
        html.append(f"<h4>{heading}</h4>{body}")
    return "".join(html)


def _plain(parts) -> tuple[str, list[tuple[str, str]]]:
    """The parts as plain strings: slicing and joining Markup would escape the other side."""
    asked, behind = parts
    return str(asked), [(str(heading), str(body)) for heading, body in behind]


def _key(lang: str, heading: str) -> str:
    return next((key for key in PART_KEYS if label(lang, key) == heading), heading)


def _bilingual(zh: str, en: str, snippets: list) -> str:
    """One part in both languages with its code once."""
    zh_text, zh_code = _split_at(zh, snippets)
    en_text, en_code = _split_at(en, snippets)
    shown = set(_PRE.findall(zh_text + zh_code))
    note = f'<p class="same-code">↑ {SAME_CODE}</p>\n'
    en_text = _PRE.sub(lambda found: note if found.group(0) in shown else found.group(0),
                       en_text)
    code = _merged_code(zh_code, en_code)
    return (_in_lang("zh", zh_text) + _in_lang("en", en_text)
            + (f'<div class="code-once">{code}</div>' if code else ""))


def _split_at(html: str, snippets: list) -> tuple[str, str]:
    """`html` cut where its snippets begin, or not cut where they are not found. The
    template prints them last, each as its code block, then a line for a raise, then a line
    and a block for an output: so they are the blocks that end `html`, that many of them."""
    if not snippets:
        return html, ""
    count = sum(1 + bool(s.raises) + 2 * bool(s.stdout) for s in snippets)
    blocks = list(_BLOCK.finditer(html))[-count:]
    if len(blocks) < count or html[blocks[-1].end():].strip():
        return html, ""
    if any(html[a.end():b.start()].strip() for a, b in zip(blocks, blocks[1:])):
        return html, ""
    codes = [m for m in blocks if m.group(0).startswith("<pre")]
    if len(codes) != len(snippets) + sum(bool(s.stdout) for s in snippets):
        return html, ""
    return html[:blocks[0].start()], html[blocks[0].start():]


def _merged_code(zh: str, en: str) -> str:
    """The snippets of both languages as one: a block both print, once; a label each prints
    beside it, as one line in both languages."""
    if not (zh or en):
        return ""
    zh_blocks, en_blocks = _BLOCK.findall(zh), _BLOCK.findall(en)
    whole = (len(zh_blocks) == len(en_blocks) and _BLOCK.sub("", zh).strip() == ""
             and _BLOCK.sub("", en).strip() == "")
    if not whole:
        shown = set(_PRE.findall(zh))
        return zh + _PRE.sub(lambda found: "" if found.group(0) in shown else found.group(0),
                             en)
    merged = []
    for ours, theirs in zip(zh_blocks, en_blocks):
        if ours == theirs:
            merged.append(ours)
        elif ours.startswith("<p>") and theirs.startswith("<p>"):
            merged.append(f"<p>{ours[3:-4]} / {theirs[3:-4]}</p>")
        else:
            merged += [ours, theirs]
    return "\n".join(merged) + "\n"


def _in_lang(lang: str, html: str) -> str:
    return f'<div class="in-lang" lang="{html_lang(lang)}">{html}</div>' if html else ""

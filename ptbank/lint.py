"""Rules the schema cannot express: language parity, checkable claims, printable code.

Each rule is a function `(bank, question) -> Iterable[Problem]`; `RULES` lists them all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import NamedTuple

from .charset import code_findings, text_findings
from .errors import Problem, Severity
from .variants import Variant, draw, format_value, question_placeholders, resolve
from .models import (CHECKS_MARKER, INTERVIEW_FIELDS, PLACEHOLDER, REFERENCE, TEXT_LISTS, Bank, Kind,
                     Question, Show)

MAX_CODE_LINE = 95
"""Longest code line that prints on A4 without wrapping, in characters."""

_CJK = re.compile(r"[\u3400-\u9fff]")
_FENCE = re.compile(r"^(```|~~~)")
_AGED_APIS = {
    "torch.cuda.amp.autocast": "torch.autocast(device_type=...)",
    "torch.cuda.amp.GradScaler": 'torch.amp.GradScaler("cuda")',
    "torch.cpu.amp.autocast": 'torch.autocast("cpu")',
}

_CROSS_REFERENCE = re.compile(r"(?:参见|见|[Ss]ee)\s*`([a-z0-9]+(?:-[a-z0-9]+)+)`")
"""The old way of pointing at another question, as a code span (见 `some-question`): refused
for {ref}`some-question` (render/markdown.py's REFERENCE)."""

_NOT_ALLOWED = ("not a character a question may hold (ptbank/charset.py allows the visible "
                "letters, digits, punctuation and symbols of the scripts the bank uses): "
                "invisible and look-alike characters make what prints differ from what it "
                "says or runs")
_ASCII_ONLY = ("code outside comments and strings is ASCII only: a look-alike or invisible "
               "character makes it run otherwise than it reads")

Rule = Callable[[Bank, Question], Iterable[Problem]]


def _problem(bank: Bank, q: Question, field: tuple, message: str,
             severity: Severity = Severity.error, text_line: int | None = None) -> Problem:
    """A finding on `field`, located on the `text_line`-th line of its text when that is known."""
    at = field if text_line is None else (*field, text_line)
    path, line = bank.where(q.id, *at).rsplit(":", 1)
    return Problem(path, int(line), ".".join(map(str, field)), message, severity)


def parallel_languages(bank: Bank, q: Question) -> Iterable[Problem]:
    """zh and en say the same thing: same number of rubric points, follow-ups and code blocks."""
    for field in TEXT_LISTS:
        zh, en = getattr(q.zh, field), getattr(q.en, field)
        if len(zh) != len(en):
            yield _problem(bank, q, ("en", field),
                           f"zh has {len(zh)} item(s), en has {len(en)}; keep them parallel")
    for field in ("question", "answer"):
        zh = _count_code_blocks(getattr(q.zh, field))
        en = _count_code_blocks(getattr(q.en, field))
        if zh != en:
            yield _problem(bank, q, ("en", field), f"zh has {zh} code block(s), en has {en}")


def languages_match_their_section(bank: Bank, q: Question) -> Iterable[Problem]:
    """The zh section is written in Chinese; the en section holds no Chinese."""
    if not _CJK.search(q.zh.title):  # render/text.py title_language: and a reference to it
        yield _problem(bank, q, ("zh", "title"), "no Chinese text in the zh title (a "
                       "cross-reference to this question would print its page in English)",
                       Severity.warning)
    elif not _CJK.search(q.zh.question):
        yield _problem(bank, q, ("zh", "question"), "no Chinese text in the zh question",
                       Severity.warning)
    for field in ("title", "question", "answer"):
        if _CJK.search(getattr(q.en, field)):
            yield _problem(bank, q, ("en", field), "Chinese characters in the en section",
                           Severity.warning)


def no_placeholders(bank: Bank, q: Question) -> Iterable[Problem]:
    """Nothing scaffolded by `ptbank new` is left unfilled."""
    for lang in ("zh", "en"):
        text = q.text(lang)
        for field in ("title", "question", "answer"):
            if "TODO" in getattr(text, field):
                yield _problem(bank, q, (lang, field), "still holds a TODO placeholder")
        for field in TEXT_LISTS:
            for index, item in enumerate(getattr(text, field)):
                if "TODO" in item:
                    yield _problem(bank, q, (lang, field, index),
                                   "still holds a TODO placeholder")


def cross_references_exist(bank: Bank, q: Question) -> Iterable[Problem]:
    """A question that sends the reader to another one names a question of the bank, with the
    reference syntax ({ref}`question-id`, printed as its number, title and a link), and both
    languages send the reader to the same questions."""
    known = {other.id for other in bank.questions}
    named: dict[str, set[str]] = {"zh": set(), "en": set()}
    for field, text in _all_text(q):
        if field[0] not in named:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for name in REFERENCE.findall(line):
                named[field[0]].add(name)
                if name not in known:
                    yield _problem(bank, q, field, f"{{ref}}`{name}` names no question of "
                                   "this bank", text_line=number)
            for name in _CROSS_REFERENCE.findall(line):
                yield _problem(bank, q, field, (
                    f"refers the reader to `{name}` as code: write {{ref}}`{name}`, which "
                    "prints the question's number and title" if name in known else
                    f"refers the reader to `{name}`, which is not a question of this bank"),
                    text_line=number)
    if named["zh"] != named["en"]:
        only = {lang: sorted(named[lang] - named[other])
                for lang, other in (("zh", "en"), ("en", "zh"))}
        yield _problem(bank, q, ("en",), "zh and en refer to different questions: "
                       + "; ".join(f"only {lang}: {', '.join(ids)}"
                                   for lang, ids in only.items() if ids))


def allowed_characters(bank: Bank, q: Question) -> Iterable[Problem]:
    """Only the characters charset.py allows, one finding per line: ASCII in code outside
    comments and strings, visible characters of the bank's scripts everywhere else (the
    "Trojan Source" tricks print something other than what runs)."""
    for field, text in _all_text(q):
        if field[0] == "snippets" and field[-1] == "code":
            found = code_findings(text)
        else:
            found = text_findings(text, prose=field[0] != "snippets")
        for f in found:
            yield _problem(bank, q, field, f"{f.describe()} at column {f.column}: "
                           + (_ASCII_ONLY if f.in_code else _NOT_ALLOWED), text_line=f.line)


def _all_text(q: Question) -> Iterable[tuple[tuple, str]]:
    """(field path, text) of every piece of text a question holds."""
    yield ("id",), q.id
    for index, tag in enumerate(q.tags):
        yield ("tags", index), tag
    for lang in ("zh", "en"):
        text = q.text(lang)
        for field in ("title", "question", "answer"):
            yield (lang, field), getattr(text, field)
        for field in TEXT_LISTS:
            for index, item in enumerate(getattr(text, field)):
                yield (lang, field, index), item
        if text.anchors:
            for point, item in text.anchors:
                yield (lang, "anchors", point), item
    for index, s in enumerate(q.snippets):
        for field in ("id", "code", "raises", "match", "stdout"):
            if getattr(s, field) is not None:
                yield ("snippets", index, field), getattr(s, field)


def no_images(bank: Bank, q: Question) -> Iterable[Problem]:
    """No Markdown images: printing must not read files or the network, in any format."""
    from markdown_it import MarkdownIt

    images = MarkdownIt("commonmark", {"html": False})
    for field, text in _all_text(q):
        if field[0] == "snippets" or "](" not in text:
            continue
        for token in images.parse(text):
            for child in token.children or []:
                if child.type == "image":
                    src = child.attrs.get("src", "")
                    line = next((n for n, text_line in enumerate(text.splitlines(), 1)
                                 if f"]({src}" in text_line), None)
                    yield _problem(bank, q, field,
                                   f"an image ({src}): printing never "
                                   "reads files or the network, so describe it in words or "
                                   "draw it as a table or code", text_line=line)


def checks_a_claim(bank: Bank, q: Question) -> Iterable[Problem]:
    """At least one snippet can fail for a wrong claim (assert, raises or stdout)."""
    if not any(s.checks_a_claim for s in q.snippets):
        yield _problem(bank, q, ("snippets",),
                       "no snippet checks a claim: add an assert, `raises` or `stdout`")


def snippet_fields_consistent(bank: Bank, q: Question) -> Iterable[Problem]:
    """`match` only means something with `raises`."""
    for index, s in enumerate(q.snippets):
        if s.match is not None and s.raises is None:
            yield _problem(bank, q, ("snippets", index, "match"), "`match` needs `raises`")


def printable_code(bank: Bank, q: Question) -> Iterable[Problem]:
    """Code lines fit the printed page."""
    for index, s in enumerate(q.snippets):
        for number, line in enumerate(s.code.splitlines(), 1):
            if len(line) > MAX_CODE_LINE:
                yield _problem(bank, q, ("snippets", index, "code"),
                               f"line {number} of the code has {len(line)} characters "
                               f"(max {MAX_CODE_LINE})", text_line=number)
    for lang in ("zh", "en"):
        for field in ("question", "answer"):
            for number, line in _code_block_lines(getattr(q.text(lang), field)):
                if len(line) > MAX_CODE_LINE:
                    yield _problem(bank, q, (lang, field),
                                   f"a code line in the text has {len(line)} characters "
                                   f"(max {MAX_CODE_LINE})", Severity.warning, number)


def markup_prints_as_meant(bank: Bank, q: Question) -> Iterable[Problem]:
    """No `**` survives Markdown parsing as literal text (unbalanced or unrecognised bold)."""
    from .render.mdparse import parse
    from .render.text import fix_cjk_emphasis

    for lang in ("zh", "en"):
        text = q.text(lang)
        fields = [("title", text.title), ("question", text.question), ("answer", text.answer)]
        fields += [(("rubric", i), item) for i, item in enumerate(text.rubric)]
        fields += [(("follow_ups", i), item) for i, item in enumerate(text.follow_ups)]
        fields += [(("checks", i), item) for i, item in enumerate(text.checks)]
        for field, markdown in fields:
            literal = [t.content for token in parse(fix_cjk_emphasis(markdown))
                       for t in token.children or [] if t.type == "text" and "**" in t.content]
            if literal:
                where = (lang, *field) if isinstance(field, tuple) else (lang, field)
                yield _problem(bank, q, where, f"`**` would print literally near "
                                               f"{literal[0].strip()[:40]!r}: balance the bold, "
                                               "or put code in backticks")


_TEX = re.compile(r"[_^]\{(?!\{)[^{}\n]*\}|\\(?:frac|sqrt|sum|prod|cdot|times|alpha|beta|gamma|"
                  r"theta|lambda|sigma|mathrm|mathbf|text|left|right|le|ge|approx)\b")
"""TeX a reader would see raw: `p_{k+1}`, `α^{k+1}`, `\\frac`. Nothing typesets it in any
format, so formulas are plain text: `p_(k+1)`, `α^(k+1)`, `(a + b) / c`, `√d`."""


def no_tex(bank: Bank, q: Question) -> Iterable[Problem]:
    """Prose holds no TeX markup (the PDF, DOCX, site and cards would print it as typed)."""
    for field, text in _all_text(q):
        if field[0] not in ("zh", "en"):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found = _TEX.search(line)
            if found:
                yield _problem(bank, q, field, f"TeX {found.group(0)[:24]!r} prints as typed: "
                               "write the formula in plain text, e.g. p_(k+1), α^(k+1)",
                               text_line=number)


_HAN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
"""A Chinese character (and kana): what the spacing rule puts a space between and Latin text."""
_SPOT = 5
"""Printed characters (a code span counts as one) a spacing finding quotes on each side."""


def chinese_spacing(bank: Bank, q: Question) -> Iterable[Problem]:
    """zh prose puts one space between a Chinese character and a Latin letter, a digit or
    inline code, and none beside full-width punctuation: `每个 rank 直接`, `共 8 个`,
    `用 `x` 算`, `rank，`; `15%` and `233°` stay one word (`有 15% 的提升`).

    The convention of Chinese technical writing, as 中文文案排版指北 words it
    (https://github.com/sparanoid/chinese-copywriting-guidelines: 中英文之间需要增加空格,
    中文与数字之间需要增加空格, 全角标点与其他字符之间不加空格, no space in 15% or 233°, and its
    example 围绕 `AVObject` 进行 spaces inline code too) and as W3C's Requirements for Chinese
    Text Layout describe it (https://www.w3.org/International/clreq/, §3.2.2 mixed text in
    horizontal writing: space between Han and Western letters or digits, none where Chinese
    punctuation touches them). Spacing inside Latin text (`10 Gbps`) is not this rule's, nor
    the space that sets a bold run-in heading off from its paragraph (`**公式。** 每一层`):
    the heading is markup, like the English text's `**Formula.** Each layer`.

    Checked on the text as it prints: Markdown code (code spans, fenced and indented blocks)
    and snippets are never looked at, bold and link markup are seen through, and a source
    line break counts as what the renderers print for it (render.text.softbreak_joiner),
    nothing next to a Chinese character: `rank` ending one line and `直接` starting the next
    print as "rank直接".
    """
    for field, text in _all_text(q):
        if field[0] != "zh":
            continue
        for glyphs in _printed_runs(text):
            for spot in _spacing_spots(glyphs):
                yield _problem(bank, q, field, spot.message, text_line=spot.line)


class _Glyph(NamedTuple):
    """One printed character of prose, or a whole code span (`code`)."""

    text: str
    line: int
    """1-based line of the field's text it stands on."""
    joined: bool = False
    """A source line break that prints as nothing stands just before it."""
    code: bool = False
    after_bold: bool = False
    """Bold (or italics) ends just before it: `**标题。** 正文`, a run-in heading."""

    def kind(self, before: str) -> str:
        """han, latin (a letter, a digit, inline code, % or ° after a digit), punct (full-width
        punctuation), space or other."""
        char = self.text
        if self.code:
            return "latin"
        if char.isspace():
            return "space"
        if _HAN.match(char):
            return "han"
        if char in "%°":
            return "latin" if before[-1:].isdigit() else "other"
        point = ord(char)
        if char.isascii() or 0xA0 <= point <= 0x3FF:
            return "latin" if unicodedata.category(char)[0] in "LN" else "other"
        full_width = 0x3001 <= point <= 0x303F or 0xFF01 <= point <= 0xFF65
        return "punct" if full_width and unicodedata.category(char)[0] in "PS" else "other"


class _Spot(NamedTuple):
    line: int
    message: str


def _printed_runs(markdown: str) -> Iterable[list[_Glyph]]:
    """The printed characters of each paragraph, heading and table cell of `markdown`, code
    blocks left out, a soft line break turned into what the renderers print for it."""
    from .render.mdparse import parse
    from .render.text import fix_cjk_emphasis, softbreak_joiner

    for block in parse(fix_cjk_emphasis(markdown)):
        if block.type != "inline":
            continue
        line, joined, closed, glyphs = (block.map[0] + 1 if block.map else 1), False, False, []
        children, source, at = block.children or [], block.content, 0
        for index, token in enumerate(children):
            if token.type == "text":
                glyphs += [_Glyph(char, line, joined and not n, after_bold=closed and not n)
                           for n, char in enumerate(token.content)]
                joined, closed = (joined, closed) if not token.content else (False, False)
            elif token.type == "code_inline":
                glyphs.append(_Glyph(f"`{token.content}`", line, joined, code=True))
                joined = closed = False
                found = _code_span_source(token).search(source, at)
                if found:  # a line break inside a code span prints as a space
                    line, at = line + found.group().count("\n"), found.end()
            elif token.type in ("softbreak", "hardbreak"):
                before = children[index - 1].content if index else ""
                after = children[index + 1].content if index + 1 < len(children) else ""
                printed = "\n" if token.type == "hardbreak" else softbreak_joiner(before, after)
                line, at = line + 1, source.find("\n", at) + 1
                glyphs += [_Glyph(printed, line, after_bold=closed)] if printed else []
                joined, closed = not printed, closed and not printed
            elif token.type in ("strong_close", "em_close"):
                closed = True
            elif token.type == "html_inline":
                glyphs.append(_Glyph("\n", line))  # a task list's checkbox: not prose
        yield glyphs


def _code_span_source(token) -> re.Pattern:
    """What a code span token was written as: its line breaks became spaces (CommonMark)."""
    inner = "".join("[ \n]" if char == " " else re.escape(char) for char in token.content)
    return re.compile(f"{re.escape(token.markup)}[ \n]?{inner}[ \n]?{re.escape(token.markup)}")


def _spacing_spots(glyphs: list[_Glyph]) -> Iterable[_Spot]:
    kinds = [g.kind(glyphs[i - 1].text if i else "") for i, g in enumerate(glyphs)]
    for i in range(1, len(glyphs)):
        if {kinds[i - 1], kinds[i]} == {"han", "latin"}:
            start, end = _word(kinds, i - 1, -1), _word(kinds, i, 1)
            where = f"between {_show(glyphs, start, i)} and {_show(glyphs, i, end)} " \
                    f"in {_show(glyphs, start - _SPOT, end + _SPOT)}"
            if glyphs[i].joined:
                yield _Spot(glyphs[i - 1].line, f"a line break {where} prints as nothing: "
                            "break the line at a Chinese character or punctuation instead")
            else:
                yield _Spot(glyphs[i].line, f"no space {where}: put one space between "
                            "Chinese and a Latin letter, a digit or inline code")
        elif kinds[i] == "space" and kinds[i - 1] in _SPACED:
            end = next((j for j in range(i, len(glyphs)) if kinds[j] != "space"), i)
            run_in_heading = kinds[i - 1] == "punct" and glyphs[i].after_bold
            if kinds[end] in _SPACED and "punct" in (kinds[i - 1], kinds[end]) and \
                    not run_in_heading:
                start, stop = _word(kinds, i - 1, -1), _word(kinds, end, 1)
                yield _Spot(glyphs[i].line, f"a space between {_show(glyphs, start, i)} and "
                            f"{_show(glyphs, end, stop)} in "
                            f"{_show(glyphs, start - _SPOT, stop + _SPOT)}: full-width "
                            "punctuation takes no space on either side")


_SPACED = ("punct", "han", "latin")


def _word(kinds: list[str], at: int, step: int) -> int:
    """Where the Latin word through `at` ends going `step` (exclusive), or `at` ± 1 for
    a Chinese character: what a spacing message names on each side of the spot."""
    end = at + step
    while kinds[at] == "latin" and 0 <= end < len(kinds) and kinds[end] == "latin" and \
            abs(end - at) < 24:
        end += step
    return end if step > 0 else end + 1


def _show(glyphs: list[_Glyph], start: int, end: int) -> str:
    """The printed text of glyphs[start:end], quoted, long code spans shortened."""
    shown = "".join(" " if g.text.isspace() else g.text if len(g.text) <= 24
                    else g.text[:20] + "…`" for g in glyphs[max(0, start): end])
    return repr(shown.strip())


def current_apis(bank: Bank, q: Question) -> Iterable[Problem]:
    """Printed code teaches current APIs; aged ones belong in hidden checks or prose only."""
    for index, s in enumerate(q.snippets):
        if s.show is Show.hidden:
            continue
        for aged, current in _AGED_APIS.items():
            if aged in s.code:
                yield _problem(bank, q, ("snippets", index, "code"),
                               f"{aged} is deprecated; print {current} instead", Severity.warning)


def coding_tasks_are_tested(bank: Bank, q: Question) -> Iterable[Problem]:
    """A hands-on task has a hidden snippet that tests the reference solution."""
    if q.kind is Kind.coding and not any(s.show is Show.hidden for s in q.snippets):
        yield _problem(bank, q, ("snippets",),
                       "coding task without a hidden snippet that tests the solution",
                       Severity.warning)


_NUMBERED_CHECK = re.compile(r"^\s*# (\d+)\. ")


def interview_fields_agree(bank: Bank, q: Question) -> Iterable[Problem]:
    """Anchors in both languages or neither; bonus points name rubric points and leave at
    least one must-have."""
    if (q.zh.anchors is None) != (q.en.anchors is None):
        lang = "en" if q.en.anchors is None else "zh"
        yield _problem(bank, q, (lang, "anchors"), "the other language has anchors; give them "
                       "in both or neither")
    size = len(q.en.rubric)
    wrong = [n for n in q.bonus if n > size]
    if wrong:
        yield _problem(bank, q, ("bonus",), f"names rubric point(s) {wrong}; the rubric has "
                       f"{size}")
    elif q.bonus and len(set(q.bonus)) >= size:
        yield _problem(bank, q, ("bonus",), "every rubric point is bonus: leave at least one "
                       "must-have")


def lacks_interview_fields(q: Question) -> list[str]:
    """Which of the interview fields (and bonus marks) a question lacks: `lint --todo`."""
    missing = [f for f in INTERVIEW_FIELDS if not getattr(q.en, f)]
    return missing + (["bonus"] if not q.bonus and len(q.en.rubric) > 2 else [])


def checks_are_described(bank: Bank, q: Question) -> Iterable[Problem]:
    """A hidden test split at the checks marker numbers its checks `# 1.`, `# 2.`, ... and
    `checks` describes each in both languages, for interviewer editions to print."""
    split = [(i, s.solution_and_checks) for i, s in enumerate(q.snippets)
             if s.show is Show.hidden and s.solution_and_checks]
    if not split:
        if q.zh.checks or q.en.checks:
            yield _problem(bank, q, ("zh", "checks"), "`checks` describe a hidden test, but no "
                           f"hidden snippet has a `{CHECKS_MARKER}` line")
        return
    if len(split) > 1:
        yield _problem(bank, q, ("snippets", split[1][0], "code"),
                       f"only one hidden test may have a `{CHECKS_MARKER}` line")
    index, (_, checks) = split[0]
    numbers = [int(m.group(1)) for line in checks.splitlines()
               if (m := _NUMBERED_CHECK.match(line))]
    if numbers != list(range(1, len(numbers) + 1)) or not numbers:
        yield _problem(bank, q, ("snippets", index, "code"),
                       f"number the checks after `{CHECKS_MARKER}` as `# 1. ...`, `# 2. ...` "
                       f"in order (found {numbers or 'none'})")
    for lang in ("zh", "en"):
        described = len(q.text(lang).checks)
        if described != len(numbers):
            yield _problem(bank, q, (lang, "checks"),
                           f"{described} check(s) described, the hidden test has "
                           f"{len(numbers)}: describe each `# N.` check once")


def placeholders_are_defined(bank: Bank, q: Question) -> Iterable[Problem]:
    """A parametrized question's placeholders (variants.py): each one defined, each parameter
    used in both languages' question and in `solve`, each answer printed, and zh and en using
    the same set in each field. Answers are for prose: snippets run beside `solve`."""
    declared = {("params", n) for n in q.params} | {("answers", n) for n in q.answers}
    used: dict[tuple, set] = {}
    for field, found in question_placeholders(q):
        used[field] = found
        for kind, name in sorted(found - declared):
            yield _problem(bank, q, field, f"{{{{{kind}.{name}}}}} is not defined: declare it "
                           f"under `{kind}:`" if q.params else
                           f"{{{{{kind}.{name}}}}}: only a question with `params:` and `solve:` "
                           "has variants to fill it from")
        if field[0] == "snippets" and any(kind == "answers" for kind, _ in found):
            yield _problem(bank, q, field, "code can use {{params.x}} but not {{answers.x}}: "
                           "snippets run beside `solve`, not after it; compute the value in "
                           "the snippet")
        for match in PLACEHOLDER.finditer(_field_text(q, field)):
            kind, name, spec = match.groups()
            sample = q.params[name].default if kind == "params" and name in q.params else 1.5
            try:
                format_value(sample, spec or "")
            except (ValueError, TypeError) as exc:
                yield _problem(bank, q, field, f"{match.group(0)}: not a format spec for its "
                               f"value ({exc})")
        if field[1:] == ("title",) and found:
            yield _problem(bank, q, field, "a title holds no placeholder: contents, cards and "
                           "cross-references print it without a variant")
    for field, found in used.items():
        if field[0] == "zh":
            other = used.get(("en", *field[1:]), set())
            if found != other:
                names = ", ".join(f"{k}.{n}" for k, n in sorted(found ^ other))
                yield _problem(bank, q, ("en", *field[1:]), f"zh and en use different "
                               f"placeholders here ({names}); both languages give the same values")
    for name in q.params:
        for lang in ("zh", "en"):
            if ("params", name) not in used[(lang, "question")]:
                yield _problem(bank, q, ("params", name), f"parameter {name} is not in the "
                               f"{lang} question: a candidate must be told every value that "
                               "changes the answer")
        if not re.search(rf"""params\[\s*["']{name}["']\s*\]""", q.solve or ""):
            yield _problem(bank, q, ("solve",), f"solve never reads params[{name!r}]: a "
                           "parameter that does not change the answers is not a variant")
    for name in q.answers:
        if not any(("answers", name) in found for field, found in used.items()
                   if field[0] != "snippets"):
            yield _problem(bank, q, ("answers", name), f"answer {name} is never printed: use "
                           f"{{{{answers.{name}}}}} in the answer or the rubric")
    if q.solve is not None:
        try:
            compile(q.solve, "solve", "exec", dont_inherit=True)
        except SyntaxError as exc:
            yield _problem(bank, q, ("solve",), f"solve does not parse: {exc.msg} (line "
                           f"{exc.lineno})")
    for index, snippet in enumerate(q.snippets):
        if q.params and snippet.id == "solve":
            yield _problem(bank, q, ("snippets", index, "id"), "`solve` names the variants' "
                           "own snippets (solve@N): give this one another id")


RULES: tuple[Rule, ...] = (
    parallel_languages,
    interview_fields_agree,
    languages_match_their_section,
    no_placeholders,
    cross_references_exist,
    allowed_characters,
    no_images,
    checks_a_claim,
    snippet_fields_consistent,
    printable_code,
    markup_prints_as_meant,
    no_tex,
    chinese_spacing,
    current_apis,
    coding_tasks_are_tested,
    checks_are_described,
)


def lint(bank: Bank) -> list[Problem]:
    """Every finding of every rule, sorted by file and line. A parametrized question is checked
    as it prints (its canonical variant, answers standing in as 1), and its placeholders apart."""
    return sorted([p for q in bank.questions for rule in RULES for p in rule(bank, _as_printed(q))]
                  + [p for q in bank.questions for p in placeholders_are_defined(bank, q)])


def _field_text(q: Question, field: tuple) -> str:
    if field[0] == "snippets":
        return q.snippets[field[1]].code
    value = getattr(q.text(field[0]), field[1])
    if field[1] == "anchors":
        return getattr(value, field[2])
    return value[field[2]] if len(field) > 2 else value


def _as_printed(q: Question) -> Question:
    if not q.params:
        return q
    return resolve(q, Variant(0, draw(q, 0), {name: 1 for name in q.answers}))


def _code_block_lines(markdown: str) -> Iterable[tuple[int, str]]:
    """(1-based line number, line) of every line inside a fenced code block."""
    inside = False
    for number, line in enumerate(markdown.splitlines(), 1):
        if _FENCE.match(line.strip()):
            inside = not inside
        elif inside:
            yield number, line


def _count_code_blocks(markdown: str) -> int:
    fences = sum(1 for line in markdown.splitlines() if _FENCE.match(line.strip()))
    return (fences + 1) // 2

"""Rules the schema cannot express: language parity, checkable claims, printable code.

Each rule is a function `(bank, question) -> Iterable[Problem]`; `RULES` lists them all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .charset import code_findings, text_findings
from .errors import Problem, Severity
from .models import CHECKS_MARKER, INTERVIEW_FIELDS, TEXT_LISTS, Bank, Kind, Question, Show

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
"""How an answer points at another question: 见 `some-question`, or see `some-question`."""

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
    if not _CJK.search(q.zh.title + q.zh.question):
        yield _problem(bank, q, ("zh", "title"), "no Chinese text in zh title/question",
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
    """A question that sends the reader to another one names a question of the bank."""
    known = {other.id for other in bank.questions}
    for lang in ("zh", "en"):
        for field in ("question", "answer"):
            for number, line in enumerate(getattr(q.text(lang), field).splitlines(), 1):
                for name in _CROSS_REFERENCE.findall(line):
                    if name not in known:
                        yield _problem(bank, q, (lang, field),
                                       f"refers the reader to `{name}`, which is not a "
                                       "question of this bank", text_line=number)


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
    current_apis,
    coding_tasks_are_tested,
    checks_are_described,
)


def lint(bank: Bank) -> list[Problem]:
    """Every finding of every rule, sorted by file and line."""
    return sorted(p for q in bank.questions for rule in RULES for p in rule(bank, q))


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

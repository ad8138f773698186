"""Variants of a parametrized question: parameters drawn from a seed, answers torch computes.

Like R/exams' dynamic exercises and PrairieLearn's `generate()`, but the answer is computed by
the question's own `solve` code under the pinned torch, in the verifier's sandbox, as one more
snippet: `solve@3` is variant 3's. Its values land in the verification record, so a fresh clone
prints any verified variant without running torch.

- Variant 0 is the canonical one (each parameter's `default`): the bank editions print it.
- Variants 1..VARIANTS are drawn from the question id alone, so they are the same everywhere;
  a sheet takes variant `variant_for(sheet seed, question id)`, independently per question.
- A snippet whose code holds {{params.x}} is verified once per variant (`its-id@3`); one that
  holds none runs once, as before.
- {{answers.x}} is for prose only: snippets run beside `solve`, not after it.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .models import PLACEHOLDER, TEXT_LISTS, Question, Scalar, Show, Snippet

VARIANTS = 16
"""Variants verified (and recorded) per parametrized question besides the canonical one."""
MARKER = "@@ptbank-answers "
"""Starts the line on which a solve snippet hands its answers back (on its stdout)."""
UNKNOWN = "⟨{}⟩"
"""How an answer prints where it is not known (a --draft build, which runs nothing)."""

Values = dict[str, Scalar | list]


@dataclass(frozen=True)
class Variant:
    """One variant of a question: its number, drawn parameters and (once solved) answers."""

    index: int
    params: Values
    answers: Values | None = None


# --- drawing ------------------------------------------------------------------------------

def draw(question: Question, index: int) -> Values:
    """The parameters of variant `index`: the defaults for 0, else drawn from the question id
    and the index (Python's seeded Mersenne Twister, the same on every machine)."""
    if index == 0:
        return {name: p.default for name, p in question.params.items()}
    rng = random.Random(f"ptbank-variant:{question.id}:{index}")
    return {name: rng.choice(p.values()) for name, p in question.params.items()}


def variant_for(sheet_seed: int | str, question_id: str) -> int:
    """The variant a sheet gives: hashed from (sheet seed, question id), so two questions on
    one sheet vary independently (PrairieLearn #2258) and a regenerated sheet gets the same."""
    digest = hashlib.sha256(f"{sheet_seed}:{question_id}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % VARIANTS


# --- what the verifier runs -----------------------------------------------------------------

def solve_snippet(question: Question, index: int, params: Values | None = None) -> Snippet:
    """The snippet that computes variant `index`'s answers: `params` defined, then the
    question's `solve`, then a check of what it set and the line handing it back."""
    params = draw(question, index) if params is None else params
    declared = {name: {"min": a.min, "max": a.max} for name, a in question.answers.items()}
    code = (f"params = {params!r}\n\n{question.solve.rstrip()}\n\n"
            f"{_HAND_BACK.format(declared=declared, marker=MARKER)}")
    return Snippet.model_construct(id=f"solve@{index}", code=code, show=Show.hidden, raises=None,
                                   match=None, stdout=None, requires=[], timeout=60,
                                   memory_mb=4096)


_HAND_BACK = '''\
def _ptbank_hand_back(answers, declared):  # added by ptbank: checks and returns the answers
    import json, math
    if not isinstance(answers, dict) or set(answers) != set(declared):
        got = sorted(answers) if isinstance(answers, dict) else type(answers).__name__
        raise AssertionError(f"solve must set `answers` to a dict of {{sorted(declared)}}; "
                             f"it set {{got}}")
    def plain(value):
        if hasattr(value, "tolist"):
            value = value.tolist()
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise AssertionError(f"an answer must be a number, a string or a list of numbers, "
                                 f"not {{type(value).__name__}}")
        return value
    out = {{}}
    for name, bounds in declared.items():
        value = out[name] = plain(answers[name])
        for number in (value if isinstance(value, list) else [value]):
            if isinstance(number, str):
                continue
            if not math.isfinite(number):
                raise AssertionError(f"answer {{name}} = {{value!r}} is not finite")
            if bounds["min"] is not None and number < bounds["min"]:
                raise AssertionError(f"answer {{name}} = {{value!r}} is below its min "
                                     f"{{bounds['min']}}: a degenerate variant")
            if bounds["max"] is not None and number > bounds["max"]:
                raise AssertionError(f"answer {{name}} = {{value!r}} is above its max "
                                     f"{{bounds['max']}}: a degenerate variant")
    print("\\n{marker}" + json.dumps(out, sort_keys=True))


_ptbank_hand_back(answers, {declared!r})
'''


def verification_snippets(question: Question) -> list[tuple[int, Snippet]]:
    """(index in the source, snippet) of everything the verifier runs for a question: its own
    snippets, and for a parametrized one each variant's `solve` and each snippet that uses a
    parameter once per variant (index -1 for solve, whose line is the question's `solve`)."""
    if not question.params:
        return list(enumerate(question.snippets))
    found: list[tuple[int, Snippet]] = []
    for index in range(VARIANTS + 1):
        params = draw(question, index)
        found.append((-1, solve_snippet(question, index, params)))
        for position, snippet in enumerate(question.snippets):
            if PLACEHOLDER.search(snippet.code):
                found.append((position, snippet.model_copy(update={
                    "id": f"{snippet.id}@{index}", "code": fill_code(snippet.code, params)})))
            elif index == 0:
                found.append((position, snippet))
    return found


def answers_from(output: str) -> Values | None:
    """The answers a solve snippet handed back on its stdout, or None when it did not."""
    for line in reversed(output.splitlines()):
        if line.startswith(MARKER):
            try:
                values = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            return values if isinstance(values, dict) else None
    return None


def solve_index(snippet_id: str) -> int | None:
    """The variant a verification snippet id names as its `solve` (`solve@3` → 3), else None."""
    head, _, tail = snippet_id.partition("@")
    return int(tail) if head == "solve" and tail.isdigit() else None


# --- filling placeholders -----------------------------------------------------------------

def fill_code(code: str, params: Values) -> str:
    """Code with each {{params.x}} replaced by the value as a Python literal."""
    def value(match):
        kind, name, spec = match.groups()
        if kind != "params" or name not in params:
            return match.group(0)  # lint names it
        return format(params[name], spec) if spec else repr(params[name])
    return PLACEHOLDER.sub(value, code)


def fill_text(text: str, params: Values, answers: Values | None) -> str:
    """Prose with each placeholder replaced by its value, formatted by the placeholder's spec,
    else the answer's declared format; an answer not known prints as ⟨name⟩."""
    def value(match):
        kind, name, spec = match.groups()
        source = params if kind == "params" else answers
        if source is None or name not in source:
            return UNKNOWN.format(name)
        try:
            return format_value(source[name], spec or "")
        except (ValueError, TypeError):
            return match.group(0)  # not a spec for this value: lint names it
    return PLACEHOLDER.sub(value, text)


def format_value(value, spec: str) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v, spec) for v in value) + "]"
    if isinstance(value, float) and not spec:
        return f"{value:g}" if abs(value) < 1e16 else repr(value)
    return format(value, spec)


def resolve(question: Question, variant: Variant, note: Mapping[str, str] | None = None
            ) -> Question:
    """The question as printed for `variant`: every placeholder filled, in every language's
    text and in the printed code. `note` (lang → plain text) is added to the question's text,
    in italics as one span: two spans side by side ("*…。**…*") do not close in CommonMark
    after CJK punctuation."""
    answers = variant.answers
    for name, spec in question.answers.items():
        if answers and name in answers and spec.format and not isinstance(answers[name], str):
            answers = {**answers, name: _Formatted(answers[name], spec.format)}
    texts = {}
    for lang in ("zh", "en"):
        text = question.text(lang)
        update = {field: fill_text(getattr(text, field), variant.params, answers)
                  for field in ("title", "question", "answer")}
        for field in TEXT_LISTS:
            update[field] = [fill_text(item, variant.params, answers)
                             for item in getattr(text, field)]
        if text.anchors:
            update["anchors"] = text.anchors.model_copy(update={
                point: fill_text(item, variant.params, answers) for point, item in text.anchors})
        if note and note.get(lang):
            update["question"] = f"{update['question'].rstrip()}\n\n*{note[lang]}*\n"
        texts[lang] = text.model_copy(update=update)
    snippets = [s.model_copy(update={"code": fill_code(s.code, variant.params)})
                for s in question.snippets]
    return question.model_copy(update={**texts, "snippets": snippets})


class _Formatted:
    """An answer with its declared format, used where the placeholder gives none."""

    def __init__(self, value, spec: str):
        self.value, self.spec = value, spec

    def __format__(self, spec: str) -> str:
        return format_value(self.value, spec or self.spec)


def placeholders(text: str) -> set[tuple[str, str]]:
    """(kind, name) of every placeholder in `text`."""
    return {(m.group(1), m.group(2)) for m in PLACEHOLDER.finditer(text)}


def question_placeholders(question: Question) -> Iterable[tuple[tuple, set[tuple[str, str]]]]:
    """(field path, placeholders) of each piece of a question's text and code."""
    for lang in ("zh", "en"):
        text = question.text(lang)
        for field in ("title", "question", "answer"):
            yield (lang, field), placeholders(getattr(text, field))
        for field in TEXT_LISTS:
            for index, item in enumerate(getattr(text, field)):
                yield (lang, field, index), placeholders(item)
        if text.anchors:
            for point, item in text.anchors:
                yield (lang, "anchors", point), placeholders(item)
    for index, snippet in enumerate(question.snippets):
        yield ("snippets", index, "code"), placeholders(snippet.code)


# --- comparing ----------------------------------------------------------------------------

def agree(question: Question, ours: Values, theirs: Values) -> list[str]:
    """The answers that differ beyond their tolerance between two solves of one variant."""
    differ = []
    for name, spec in question.answers.items():
        a, b = ours.get(name), theirs.get(name)
        if not _close(a, b, spec.rtol, spec.atol):
            differ.append(f"{name}: {a!r} vs {b!r}")
    return differ


def _close(a, b, rtol: float, atol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or a == b
    return a == b


# --- what the verified run computed -----------------------------------------------------

class Solved:
    """Each variant's answers, as the verification reports hold them: the pinned build's (the
    first report's), which every other build must match within each answer's tolerance.
    Without reports (a --draft build) nothing is solved: answers print as ⟨name⟩."""

    def __init__(self, bank, reports):
        self.answers: dict[tuple[str, int], Values] = {}
        self.questions = {q.id: q for q in bank.questions if q.params}
        if not reports or not self.questions:
            return
        differ = []
        for number, report in enumerate(reports):
            for result in report.results:
                index = solve_index(result.snippet_id)
                if index is None or result.question_id not in self.questions:
                    continue
                key = (result.question_id, index)
                if result.answers is None:
                    differ.append(f"{result.name}: no answers under torch {report.torch_version}"
                                  f" ({result.status.value})")
                elif number == 0:
                    self.answers[key] = result.answers
                elif key in self.answers:
                    for what in agree(self.questions[result.question_id], self.answers[key],
                                      result.answers):
                        differ.append(f"{result.name}: {what} (torch {reports[0].torch_version}"
                                      f" vs {report.torch_version})")
        if differ:
            from .errors import VerificationRequired
            raise VerificationRequired(
                "variants whose answers are not settled:\n  " + "\n  ".join(differ[:10])
                + ("\n  ..." if len(differ) > 10 else "")
                + "\nrun `ptbank verify` for details, or build with --draft")

    def variant(self, question: Question, index: int) -> Variant:
        return Variant(index, draw(question, index), self.answers.get((question.id, index)))

    def printed(self, question: Question, index: int, lang_note: Mapping[str, str] | None
                ) -> Question:
        """`question` as printed with variant `index` (itself when it has no parameters)."""
        if not question.params:
            return question
        return resolve(question, self.variant(question, index), lang_note)

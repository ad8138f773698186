"""The one schema of ptbank: question sources, bank metadata and topics.

Every other module reads these models; nothing else describes the source format.
The JSON Schema that editors use (`ptbank schema`) is generated from here.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from enum import Enum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
CHECKS_MARKER = "# --- checks ---"
"""The line of a coding task's hidden test that ends its reference solution: what follows
checks any solution put in place of what precedes it (tests/wrong_solutions proves they do)."""
REFERENCE = re.compile(r"\{ref\}`([^`\n]*)`")
"""A cross-reference to another question in prose: {ref}`question-id` (MyST's role syntax).
Printed as the question's number and title, a link where the document holds it
(render/markdown.py); lint checks that the question exists."""
PLACEHOLDER = re.compile(r"\{\{\s*(params|answers)\.([A-Za-z_][A-Za-z0-9_]*)\s*(?::([^{}]*))?\}\}")
"""A value of a parametrized question's variant in its text or code: {{params.name}} or
{{answers.name}}, optionally with a format spec ({{answers.gib:.1f}}); variants.py fills them."""
PARAM_NAME = r"^[a-z_][a-z0-9_]*$"
SEED_ITEM = r"^(q([1-9]|[12][0-9]|3[0-6])|task-[a-e]|bonus-[1-5])$"

KebabId = Annotated[str, StringConstraints(pattern=KEBAB)]
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Level(str, Enum):
    """How senior a candidate must be to answer well."""

    beginner = "beginner"
    intermediate = "intermediate"
    advanced = "advanced"


LEVELS: tuple[Level, ...] = tuple(Level)
TEXT_LISTS = ("rubric", "follow_ups", "checks", "hints", "red_flags")
"""The list fields of a question's text: parallel in both languages, each item checked."""
INTERVIEW_FIELDS = ("anchors", "hints", "red_flags")
"""What an interviewer runs a question with besides its rubric; optional at first
(`ptbank lint --todo` lists the questions that lack them)."""


class Kind(str, Enum):
    """What the candidate is asked to do."""

    concept = "concept"
    coding = "coding"


class Show(str, Enum):
    """Where a snippet is printed."""

    answer = "answer"
    question = "question"
    hidden = "hidden"


class Lang(str, Enum):
    """A language a question is written in."""

    zh = "zh"
    en = "en"


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True
    )


class Anchors(_Strict):
    """What an answer at each point of the 1–4 scale sounds like, for the interviewer."""

    one: NonEmpty
    """1: misses the point or is wrong on what matters."""
    two: NonEmpty
    """2: partly right; the must-haves are incomplete."""
    three: NonEmpty
    """3: every must-have, correctly; what a hire says."""
    four: NonEmpty
    """4: the must-haves and the depth of the bonus points, unprompted."""


class LocalizedText(_Strict):
    """One language's text of a question."""

    title: NonEmpty
    """Short heading, printed in the table of contents."""
    question: NonEmpty
    """What the candidate reads (Markdown)."""
    answer: NonEmpty
    """The reference answer (Markdown); only answer editions print it."""
    rubric: list[NonEmpty] = Field(min_length=1)
    """What a strong answer contains; printed as a checklist for interviewers."""
    follow_ups: list[NonEmpty] = []
    """Questions to ask next, in the order an interviewer would."""
    checks: list[NonEmpty] = []
    """What a coding task's hidden test checks, one line per numbered `# N.` comment after its
    `# --- checks ---` line; interviewer editions print them as the rubric's evidence."""
    anchors: Anchors | None = None
    """The anchored 1–4 scale of this question (interviewer editions)."""
    hints: list[NonEmpty] = []
    """What to say, in order, when the candidate is stuck: nudges, never the answer."""
    red_flags: list[NonEmpty] = []
    """What in an answer should worry the interviewer, whatever else it gets right."""


class Snippet(_Strict):
    """A piece of code that is executed against the pinned torch before anything prints."""

    id: KebabId
    """Unique within its question; names the snippet in verification reports."""
    code: NonEmpty
    """Python source, run as a file named `__main__` in a fresh process."""
    show: Show = Show.answer
    """answer: printed in answer editions; question: printed with the question; hidden: never printed."""
    raises: str | None = None
    """Name of the exception class the snippet must end with (e.g. RuntimeError)."""
    match: str | None = None
    """Regular expression the exception message must match (needs `raises`)."""
    stdout: str | None = None
    """Expected standard output, compared exactly after stripping surrounding whitespace."""
    requires: list[str] = []
    """What the snippet needs to run: `cuda`, `gpus>=N`, or an importable module name."""
    timeout: float = Field(default=60, gt=0, le=900)
    """Seconds before the verifier kills the snippet."""
    memory_mb: int = Field(default=4096, ge=256, le=65536)
    """MiB of private memory the snippet process may allocate beyond what it starts with."""

    @field_validator("match")
    @classmethod
    def _match_is_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @field_validator("requires")
    @classmethod
    def _requires_known_form(cls, value: list[str]) -> list[str]:
        for item in value:
            if not re.fullmatch(r"cuda|gpus>=[1-9][0-9]*|[A-Za-z_][A-Za-z0-9_.]*", item):
                raise ValueError(f"{item!r} is not `cuda`, `gpus>=N` or a module name")
        return value

    @property
    def solution_and_checks(self) -> tuple[str, str] | None:
        """(reference solution, checks) of a hidden test split at CHECKS_MARKER, else None."""
        lines = self.code.splitlines(keepends=True)
        for index, line in enumerate(lines):
            if line.strip() == CHECKS_MARKER:
                return "".join(lines[:index]), "".join(lines[index + 1:])
        return None

    @property
    def checks_a_claim(self) -> bool:
        """Whether running the snippet can fail for a wrong claim, not only for a crash.

        Counts `assert` statements and `assert_*` calls (e.g. torch.testing.assert_close) found
        by parsing the code, so the word "assert" in a comment or string does not count.
        """
        if self.raises is not None or self.stdout is not None:
            return True
        try:
            tree = ast.parse(self.code)
        except SyntaxError:
            return False
        return any(isinstance(node, ast.Assert) or _is_assert_call(node)
                   for node in ast.walk(tree))


def _is_assert_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.startswith("assert")


Scalar = int | float | str


class _Stepped(Sequence):
    """The values of a range, low + i * step, as a sequence that lists none of them: its
    membership test finds the nearest step instead of scanning."""

    def __init__(self, bounds: tuple[int | float, int | float], step: int | float):
        (self.low, high), self.step = bounds, step
        self.whole = all(isinstance(v, int) for v in (*bounds, step))
        self.count = int((high - self.low) / step + 1e-9) + 1

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> int | float:
        if not -self.count <= i < self.count:
            raise IndexError(i)
        number = self.low + (i % self.count) * self.step
        return int(number) if self.whole else round(number, 12)

    def __contains__(self, value) -> bool:
        if isinstance(value, str) or not math.isfinite(value):
            return False
        nearest = round((value - self.low) / self.step)
        return 0 <= nearest < self.count and self[nearest] == value


class Param(_Strict):
    """A parameter of a parametrized question: drawn per variant from a range or from choices."""

    default: Scalar
    """The canonical variant's value: what the bank editions print."""
    range: tuple[int | float, int | float] | None = None
    """Lowest and highest value (both included), stepped by `step`."""
    step: int | float = 1
    """The distance between the values a range draws from."""
    choices: list[Scalar] = []
    """The values to draw from, instead of a range."""

    @field_validator("step")
    @classmethod
    def _positive_step(cls, value):
        if value <= 0:
            raise ValueError("step must be above 0")
        return value

    def values(self) -> Sequence[Scalar]:
        """Every value a variant may draw, in order: a range's are computed as they are read
        (some hold thousands, and every variant drawn indexes them)."""
        return tuple(self.choices) if self.choices else _Stepped(self.range, self.step)

    def model_post_init(self, _context) -> None:
        if (self.range is None) == (not self.choices):
            raise ValueError("give either `range: [low, high]` or `choices: [...]`")
        if self.range is not None and self.range[0] > self.range[1]:
            raise ValueError(f"range {list(self.range)}: low is above high")
        if self.default not in self.values():
            raise ValueError(f"default {self.default!r} is not one of the values it draws from")


class AnswerValue(_Strict):
    """A value the `solve` code computes for each variant: printed where {{answers.name}} is."""

    format: str = ""
    """Python format spec used where the placeholder gives none, e.g. `,` or `.2f`."""
    rtol: float = Field(default=0.0, ge=0)
    """Relative tolerance a candidate's (or another build's) number may be off by."""
    atol: float = Field(default=0.0, ge=0)
    """Absolute tolerance, as numpy.isclose: |a - b| <= atol + rtol * |b|."""
    min: float | None = None
    """Lowest sensible value: a variant below it is degenerate (`ptbank stress`, verify)."""
    max: float | None = None
    """Highest sensible value."""


class Question(_Strict):
    """One interview question, in Chinese and English, with the code that proves its answer."""

    id: KebabId
    """Kebab-case, unique across the bank, stable forever (sheets refer to it)."""
    topic: KebabId
    """A key of topics.yaml."""
    level: Level
    """beginner | intermediate | advanced."""
    kind: Kind = Kind.concept
    """concept, or coding (a hands-on task with a reference solution)."""
    tags: list[KebabId] = []
    """Free keywords for search and selection."""
    minutes: int = Field(ge=1, le=60)
    """Time a candidate needs to answer, used to fill interview sheets."""
    seed: list[Annotated[str, StringConstraints(pattern=SEED_ITEM)]] = []
    """Seed items covered: q1..q36, task-a..task-e, bonus-1..bonus-5."""
    zh: LocalizedText
    """The Chinese text."""
    en: LocalizedText
    """The English text."""
    snippets: list[Snippet] = Field(min_length=1)
    """Code run by the verifier; at least one must check a claim."""
    bonus: list[Annotated[int, Field(ge=1)]] = []
    """Numbers (1-based) of the rubric points that are bonus; the others are must-haves. The
    same in both languages, as the rubrics are parallel."""
    check_points: list[Annotated[int, Field(ge=1, le=100)]] = []
    """Points of each numbered check of a coding task's hidden test, in order (default: 1
    each): `ptbank grade` scores by them, and interviewer editions print them by the checks."""

    params: dict[Annotated[str, StringConstraints(pattern=PARAM_NAME)], Param] = {}
    """Named values drawn for each variant (sheets vary them); the text, rubric and code use
    them as {{params.name}}. Empty: the question has one fixed form."""
    answers: dict[Annotated[str, StringConstraints(pattern=PARAM_NAME)], AnswerValue] = {}
    """The values `solve` computes from the drawn parameters, used as {{answers.name}} in prose."""
    solve: str | None = None
    """Python run by the verifier for every variant with `params` (a dict) defined; it sets
    `answers` to a dict holding a value (number, string or list of numbers) for each name."""

    def text(self, lang: Lang | str) -> LocalizedText:
        return self.zh if Lang(lang) is Lang.zh else self.en

    def model_post_init(self, _context) -> None:
        if bool(self.params) != (self.solve is not None):
            raise ValueError("`params` and `solve` go together: a parametrized question needs "
                             "both")
        if self.answers and not self.params:
            raise ValueError("`answers` needs `params` and `solve`")


class Topic(_Strict):
    """A section of the bank; the order of topics.yaml is the order in print."""

    zh: NonEmpty
    """Chinese name."""
    en: NonEmpty
    """English name."""


class BankTitle(_Strict):
    """The bank's title in each language."""

    zh: NonEmpty
    """Chinese title."""
    en: NonEmpty
    """English title."""


class ExplainedDrift(_Strict):
    """A difference between torch builds that the bank knows of and accepts (`ptbank drift`)."""

    warning: NonEmpty
    """Regular expression for the warning lines that differ (as `ptbank drift` prints them)."""
    why: NonEmpty
    """Why the difference is expected: the release that changed it, and where the bank says so."""

    @field_validator("warning")
    @classmethod
    def _warning_is_regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


class CodingSlot(_Strict):
    """Whether a profile's sheets include a coding task, and how much of the time it may take."""

    include: bool = True
    """True: every sheet of the profile has one coding task (when one fits)."""
    share: float = Field(default=0.4, gt=0, le=0.8)
    """Most of the question time (budget less buffer) the coding task may take, e.g. 0.4."""
    tags: list[KebabId] = []
    """The coding task carries at least one of these tags (empty: any task of the profile's
    topics): what keeps a catch-all topic's tasks to the role."""


class Profile(_Strict):
    """A role to interview for (profiles.yaml): what its sheets draw on, and in what mix."""

    name: BankTitle
    """The role's name in each language; the candidate edition prints it."""
    topics: dict[KebabId, Annotated[float, Field(gt=0)]] = Field(min_length=1)
    """Topic key → weight: the share of a sheet's questions drawn from that topic."""
    levels: dict[Level, Annotated[int, Field(ge=0)]] = Field(min_length=1)
    """Level → how many questions of that level a sheet has per round of the mix, e.g.
    beginner 1, intermediate 3, advanced 2 (a warm-up, then the core, then depth)."""
    coding: CodingSlot = CodingSlot()
    """The coding task: included or not, and its share of the time."""
    buffer_minutes: int = Field(default=5, ge=0, le=30)
    """Minutes kept free for introductions and overrun: questions fill the budget less this."""
    exclude_tags: list[KebabId] = []
    """No question carrying one of these tags is drawn for the role."""

    @field_validator("levels")
    @classmethod
    def _some_level(cls, value: dict) -> dict:
        if not any(value.values()):
            raise ValueError("at least one level needs a count above 0")
        return value


class BankMeta(_Strict):
    """bank.yaml: what every artifact states about the bank it came from."""

    title: BankTitle
    """Printed on every title page and running header."""
    version: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")]
    """Semantic version of the content; printed on every artifact and part of sheet IDs."""
    verify_also_with_torch: list[Annotated[str, StringConstraints(
        pattern=r"^\d+\.\d+(\.\d+)?$")]] = []
    """Torch versions the bank is verified under besides the pinned one (requirements.lock):
    `ptbank verify` and every build run its snippets under each, and artifacts name them all."""
    explained_drift: list[ExplainedDrift] = []
    """Warnings known to differ between those builds, each with why; `ptbank drift` lists them
    apart and fails only on what is not explained. A changed verdict is never explained."""


class Bank(BaseModel):
    """A loaded content folder: metadata, topics in print order, questions and where they came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    meta: BankMeta
    topics: dict[str, Topic]
    questions: tuple[Question, ...]
    sources: dict[str, str]
    """Question id → path of its YAML file (relative to the working directory)."""
    profiles: dict[str, Profile] = {}
    """Role profiles (profiles.yaml) by name, in file order; empty when the file is absent."""
    lines: dict[str, dict[tuple, int]] = {}
    """Question id → (field path → 1-based line in its source), for messages."""

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    def where(self, qid: str, *field: str | int) -> str:
        """`path:line` of a question's field, for messages."""
        lines = self.lines.get(qid, {})
        for cut in range(len(field), -1, -1):
            if field[:cut] in lines:
                return f"{self.sources[qid]}:{lines[field[:cut]]}"
        return f"{self.sources[qid]}:1"

"""What a template sees: a document of numbered questions grouped by topic, plus its stamp.

Built from the bank by the pipeline; templates decide what of it is shown.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime, timezone

from ..models import Bank, Question, Show, Snippet
from ..select import questions_for_level
from .labels import label
from .text import github_slug, inline_text


@dataclass(frozen=True)
class BuildStamp:
    """How the document's snippets fared under one torch build."""

    passed: int
    total: int
    torch: str
    python: str
    skipped_needs: tuple[tuple[str, ...], ...] = ()
    """One entry per skipped snippet: what it requires (e.g. `("cuda", "triton")`)."""
    sandboxed: bool = True
    """Whether the snippets ran in the sandbox; an artifact says so when they did not."""
    recorded: int = 0
    """Passes the committed verification record vouched for instead of a run here."""
    recorded_on: str = ""
    """The date of that record."""
    imported: int = 0
    """Passes reached on another machine and brought in by `ptbank cache import`: not run
    here, and said so beside the count."""

    def _needs(self, lang: str) -> str:
        """Each missing requirement once, the most common first, with how many skipped
        snippets need it ("3 need cuda, 1 triton"); a snippet needing two counts under both."""
        counts = Counter(need for needs in self.skipped_needs for need in needs)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return label(lang, "stamp_need_gap").join(
            label(lang, "stamp_need_first" if i == 0 else "stamp_need", need=need, n=n)
            for i, (need, n) in enumerate(ranked))

    def line(self, lang: str) -> str:
        text = label(lang, "stamp", passed=self.passed, total=self.total,
                     torch=self.torch, python=self.python)
        if self.recorded:
            text += label(lang, "stamp_recorded", recorded=self.recorded, date=self.recorded_on,
                          here=self.passed - self.recorded - self.imported)
        if self.imported:
            text += label(lang, "stamp_imported", imported=self.imported)
        if self.skipped_needs:
            text += label(lang, "stamp_skipped", skipped=len(self.skipped_needs),
                          needs=self._needs(lang))
        if not self.sandboxed:
            text += label(lang, "stamp_unsandboxed")
        return text


@dataclass(frozen=True)
class Stamp:
    """The verification state an artifact declares on its title block: a line per build."""

    builds: tuple[BuildStamp, ...] = ()
    draft: bool = False

    def lines(self, lang: str) -> list[str]:
        if self.draft:
            return [f"**{label(lang, 'draft')}**"]
        return [build.line(lang) for build in self.builds]


@dataclass(frozen=True)
class Item:
    """A question as printed: its number and its topic's names."""

    number: str
    question: Question
    topic_names: dict[str, str]
    langs: tuple[str, ...]

    def topic_name(self, lang: str) -> str:
        return self.topic_names[lang]

    def snippets(self, show: str) -> list[Snippet]:
        return [s for s in self.question.snippets if s.show is Show(show)]

    @property
    def heading_text(self) -> str:
        """The heading as written in Markdown (first language)."""
        return f"{self.number} {self.question.text(self.langs[0]).title}"

    @property
    def toc_title(self) -> str:
        return " / ".join(self.question.text(lang).title for lang in self.langs)

    @property
    def anchor(self) -> str:
        return github_slug(inline_text(self.heading_text))


@dataclass(frozen=True)
class Section:
    number: int
    names: dict[str, str]
    items: list[Item]
    langs: tuple[str, ...]

    @property
    def heading(self) -> str:
        return f"{self.number}. " + " / ".join(self.names[lang] for lang in self.langs)

    @property
    def anchor(self) -> str:
        return github_slug(inline_text(self.heading))


@dataclass(frozen=True)
class Document:
    """Everything a document template needs; nothing else reaches the template."""

    title: str
    subtitle: str
    langs: tuple[str, ...]
    answers: bool
    stamp: Stamp
    version: str
    date: str
    sections: list[Section] = field(default_factory=list)
    kind: str = "bank"
    """bank | sheet: selects page styling (a sheet does not start topics on new pages)."""
    extra: dict = field(default_factory=dict)
    """Per-kind values (a sheet's ID, command, minutes, points); empty for the bank."""
    references: dict[str, Reference] = field(default_factory=dict)
    """Every question a cross-reference may name (references_for); those of `sections`
    print as links, the others with their level."""

    def item_of(self, question_id: str) -> Item | None:
        """The item of question `question_id` if this document prints it."""
        return self._items.get(question_id)

    @cached_property
    def _items(self) -> dict[str, Item]:
        return {item.question.id: item for section in self.sections for item in section.items}

    @property
    def space(self) -> bool:
        """Room to write after each question: the editions without answers have it."""
        return not self.answers

    @property
    def stamp_lines(self) -> list[str]:
        first = self.langs[0]
        meta = (f"{label(first, 'version')} {self.version} · {label(first, 'date')} {self.date}")
        return [meta, *self.stamp.lines(first)]

    @property
    def draft(self) -> bool:
        return self.stamp.draft


def sections_for(bank: Bank, questions: list[Question], langs: tuple[str, ...]) -> list[Section]:
    """Group questions (already in print order) by topic, numbered as in the whole bank.

    Topic N is the Nth topic of topics.yaml that has questions, and question N.i the ith of
    that topic in the whole bank's print order: so "7.9" names one question in every edition,
    and an edition of one level skips the numbers of the others."""
    numbers = bank_numbers(bank)
    sections: list[Section] = []
    for topic_key, topic_number in _topic_numbers(bank).items():
        chosen = [q for q in questions if q.topic == topic_key]
        if chosen:
            topic = bank.topics[topic_key]
            names = {"zh": topic.zh, "en": topic.en}
            items = [Item(numbers[q.id], q, names, langs) for q in chosen]
            sections.append(Section(topic_number, names, items, langs))
    return sections


def bank_numbers(bank: Bank) -> dict[str, str]:
    """Every question's number in the whole bank ("7.9"), by id (see sections_for)."""
    in_order = questions_for_level(bank, None)
    return {q.id: f"{number}.{i}" for topic_key, number in _topic_numbers(bank).items()
            for i, q in enumerate((q for q in in_order if q.topic == topic_key), 1)}


def _topic_numbers(bank: Bank) -> dict[str, int]:
    """The topics of topics.yaml that hold questions, numbered from 1 in that order."""
    held = {q.topic for q in bank.questions}
    return {key: number for number, key in enumerate((k for k in bank.topics if k in held), 1)}


@dataclass(frozen=True)
class Reference:
    """What a cross-reference to a question prints: its number, titles and level."""

    number: str
    titles: dict[str, str]
    level: str


def references_for(bank: Bank) -> dict[str, Reference]:
    """Every question of the bank as a cross-reference target, by id."""
    numbers = bank_numbers(bank)
    return {q.id: Reference(numbers[q.id], {lang: q.text(lang).title for lang in ("zh", "en")},
                            q.level.value) for q in bank.questions}


def build_date() -> str:
    """Today, or SOURCE_DATE_EPOCH's date for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now()
    return moment.strftime("%Y-%m-%d")

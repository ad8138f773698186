"""What a template sees: a document of numbered questions grouped by topic, plus its stamp.

Built from the bank by the pipeline; templates decide what of it is shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..models import Bank, Question, Show, Snippet
from .labels import label
from .text import github_slug, inline_text


@dataclass(frozen=True)
class BuildStamp:
    """How the document's snippets fared under one torch build."""

    passed: int
    total: int
    torch: str
    python: str
    skipped_needs: tuple[str, ...] = ()
    """One entry per skipped snippet: the requirement that was missing (e.g. `cuda`)."""
    sandboxed: bool = True
    """Whether the snippets ran in the sandbox; an artifact says so when they did not."""
    recorded: int = 0
    """Passes the committed verification record vouched for instead of a run here."""
    recorded_on: str = ""
    """The date of that record."""
    imported: int = 0
    """Passes reached on another machine and brought in by `ptbank cache import`: not run
    here, and said so beside the count."""

    def line(self, lang: str) -> str:
        text = label(lang, "stamp", passed=self.passed, total=self.total,
                     torch=self.torch, python=self.python)
        if self.recorded:
            text += label(lang, "stamp_recorded", recorded=self.recorded, date=self.recorded_on,
                          here=self.passed - self.recorded - self.imported)
        if self.imported:
            text += label(lang, "stamp_imported", imported=self.imported)
        if self.skipped_needs:
            needs = ", ".join(sorted(set(self.skipped_needs)))
            text += label(lang, "stamp_skipped", skipped=len(self.skipped_needs), needs=needs)
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
    """Group questions (already in print order) by topic and number them 1.1, 1.2, 2.1, ..."""
    sections: list[Section] = []
    for topic_key, topic in bank.topics.items():
        chosen = [q for q in questions if q.topic == topic_key]
        if not chosen:
            continue
        number = len(sections) + 1
        names = {"zh": topic.zh, "en": topic.en}
        items = [Item(f"{number}.{i}", q, names, langs) for i, q in enumerate(chosen, 1)]
        sections.append(Section(number, names, items, langs))
    return sections


def build_date() -> str:
    """Today, or SOURCE_DATE_EPOCH's date for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now()
    return moment.strftime("%Y-%m-%d")

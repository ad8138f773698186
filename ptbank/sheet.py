"""Interview sheets: a seeded, time-boxed selection printed as candidate and interviewer editions.

The selection is a pure function of (bank version, request, seed), so the sheet ID printed on
both editions, together with the command printed on the interviewer edition, regenerates the
same sheet later.
"""

from __future__ import annotations

import base64
import hashlib
import random
import shlex
from dataclasses import dataclass

from .artifacts import FORMATS, Artifact
from .errors import PtbankError
from .models import Bank, Kind, Level, Question
from .render.document import Document, Item, Section, Stamp, build_date
from .render.labels import label
from .render.markdown import render_markdown
from .stamp import stamp_for


@dataclass(frozen=True)
class SheetRequest:
    """What the interviewer asked for; with the bank version it determines the sheet."""

    level: Level
    seed: int
    minutes: int | None = None
    count: int | None = None
    topics: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def command(self) -> str:
        """The `ptbank sheet` arguments that regenerate this selection."""
        parts = ["ptbank", "sheet", "--level", self.level.value, "--seed", str(self.seed)]
        parts += ["--minutes", str(self.minutes)] if self.minutes else ["--count", str(self.count)]
        if self.topics:
            parts += ["--topics", ",".join(self.topics)]
        if self.exclude:
            parts += ["--exclude", ",".join(self.exclude)]
        return shlex.join(parts)


def sheet_id(bank: Bank, request: SheetRequest) -> str:
    """Eight characters naming (bank version, request, seed), e.g. `K3QF-7ZMA`."""
    key = f"{bank.meta.version}|{request.command()}".encode()
    code = base64.b32encode(hashlib.sha256(key).digest()).decode()[:8]
    return f"{code[:4]}-{code[4:]}"


def select_questions(bank: Bank, request: SheetRequest) -> list[Question]:
    """Fill the budget (or count) with a topic mix and at most one coding task (first, if it fits).

    Never two questions on the same seed item; `exclude` ids never appear.
    """
    pool = _candidates(bank, request)
    rng = random.Random(f"{bank.meta.version}|{request.command()}")
    coding = [q for q in pool if q.kind is Kind.coding]
    concept = _topic_round_robin([q for q in pool if q.kind is Kind.concept], rng)
    rng.shuffle(coding)
    chosen: list[Question] = []
    budget = request.minutes
    wanted = request.count

    def fits(q: Question) -> bool:
        if wanted is not None and len(chosen) >= wanted:
            return False
        if budget is not None and sum(c.minutes for c in chosen) + q.minutes > budget:
            return False
        return not {s for c in chosen for s in c.seed} & set(q.seed)

    coding_slot = coding[:1] if wanted is None or wanted >= 2 else []  # one task, first
    for q in coding_slot + concept:
        if fits(q):
            chosen.append(q)
    if not chosen:
        shortest = min(q.minutes for q in pool)
        raise PtbankError(f"no question fits {budget} minutes: the shortest "
                          f"{request.level.value} question takes {shortest}")
    if wanted is not None and len(chosen) < wanted:
        raise PtbankError(f"asked for {wanted} questions but only {len(chosen)} "
                          f"{request.level.value} question(s) without a shared seed item "
                          f"are available{_filters_note(request)}")
    topic_rank = {t: i for i, t in enumerate(bank.topics)}
    return sorted(chosen, key=lambda q: (q.kind is Kind.coding, topic_rank[q.topic]))


def _candidates(bank: Bank, request: SheetRequest) -> list[Question]:
    unknown = [t for t in request.topics if t not in bank.topics]
    if unknown:
        raise PtbankError(f"unknown topic(s): {', '.join(unknown)}; "
                          f"the bank has: {', '.join(bank.topics)}")
    known_ids = {q.id for q in bank.questions}
    missing = [i for i in request.exclude if i not in known_ids]
    if missing:
        raise PtbankError(f"--exclude names unknown question id(s): {', '.join(missing)}")
    pool = [q for q in bank.questions
            if q.level is request.level and q.id not in request.exclude
            and (not request.topics or q.topic in request.topics)]
    if not pool:
        raise PtbankError(f"the bank has no {request.level.value} questions"
                          f"{_filters_note(request)}")
    return pool


def _filters_note(request: SheetRequest) -> str:
    notes = []
    if request.topics:
        notes.append(f"in topic(s) {', '.join(request.topics)}")
    if request.exclude:
        notes.append(f"after excluding {len(request.exclude)} question(s)")
    return (" " + " ".join(notes)) if notes else ""


def _topic_round_robin(questions: list[Question], rng: random.Random) -> list[Question]:
    """Shuffle within topics, then deal one per topic in turn, so a sheet mixes topics."""
    by_topic: dict[str, list[Question]] = {}
    for q in sorted(questions, key=lambda q: q.id):
        by_topic.setdefault(q.topic, []).append(q)
    topics = sorted(by_topic)
    rng.shuffle(topics)
    for topic in topics:
        rng.shuffle(by_topic[topic])
    dealt = []
    while any(by_topic.values()):
        for topic in topics:
            if by_topic[topic]:
                dealt.append(by_topic[topic].pop())
    return dealt


def build_sheet(bank: Bank, args, reports) -> list[Artifact]:
    """Both editions of one sheet in the requested formats, as artifacts to write."""
    order = {topic: rank for rank, topic in enumerate(bank.topics)}
    topics = sorted(set(args.topics or ()), key=lambda t: (order.get(t, len(order)), t))
    request = SheetRequest(level=Level(args.level), seed=args.seed, minutes=args.minutes,
                           count=args.count, topics=tuple(topics),  # the same set, one order
                           exclude=tuple(sorted(set(args.exclude))))
    questions = select_questions(bank, request)
    stamp = stamp_for(reports, questions)
    ident = sheet_id(bank, request)
    formats = FORMATS if args.format == "all" else (args.format,)
    artifacts = []
    for edition in ("candidate", "interviewer"):
        doc = sheet_document(bank, request, ident, questions, args.lang, edition, stamp)
        markdown = render_markdown(f"sheet-{edition}.md.j2", doc)
        name = f"sheet-{ident}-{edition}-{args.lang}"  # one sheet, printed in several languages
        artifacts += [Artifact(args.out / f"{name}.{fmt}", fmt, markdown, doc)
                      for fmt in formats]
    return artifacts


def sheet_document(bank: Bank, request: SheetRequest, ident: str, questions: list[Question],
                   lang: str, edition: str, stamp: Stamp) -> Document:
    langs = ("zh", "en") if lang == "bi" else (lang,)
    names = {key: {"zh": topic.zh, "en": topic.en} for key, topic in bank.topics.items()}
    items = [Item(f"{n}.", q, names[q.topic], langs) for n, q in enumerate(questions, 1)]
    first = langs[0]
    title = f"{label(first, 'sheet_title')} {ident}"
    return Document(
        title=title,
        subtitle=f"{label(first, request.level.value)} · {label(first, 'sheet_' + edition)}",
        langs=langs, answers=edition == "interviewer",
        stamp=stamp, version=bank.meta.version, date=build_date(), kind="sheet",
        sections=[Section(1, {"zh": "", "en": ""}, items, langs)],
        extra={"sheet_id": ident, "command": request.command(),
               "total_minutes": sum(q.minutes for q in questions),
               "budget": request.minutes, "points": {q.id: len(q.text(first).rubric)
                                                     for q in questions}},
    )

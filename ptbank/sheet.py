"""Interview sheets: a seeded, time-boxed selection printed as candidate and interviewer editions.

The selection is a pure function of (bank version, request, seed), so the sheet ID printed on
both editions, together with the command printed on the interviewer edition, regenerates the
same sheet later.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field, replace

from .artifacts import Artifact
from .errors import PtbankError
from .ledger import LedgerRecord, exposure, given_to, sheets
from .loop import loop_base, loop_questions
from .models import Bank, Kind, Level, Question
from .profile_draw import Draw, draw_for_profile
from .scorecard import CODING, competencies, plan
from .render import PRINT_FORMATS
from .render.document import Document, Item, Section, Stamp, build_date, references_for
from .render.labels import label
from .render.markdown import render_markdown
from .stamp import stamp_for
from .variants import VARIANTS, Solved, variant_for


LEDGER_NAME = "ledger.jsonl"
"""The default ledger, in the sheets' output folder."""


@dataclass(frozen=True)
class SheetRequest:
    """What the interviewer asked for; with the bank version and the ledger's counts it
    determines the sheet."""

    level: Level | None
    seed: int
    minutes: int | None = None
    count: int | None = None
    topics: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    profile: str | None = None
    """A role profile (profiles.yaml) instead of one level."""
    candidate: str | None = None
    """Who the sheet is for: questions the ledger gave them before never appear."""
    loop: str | None = None
    """An interview loop: its candidates all get the questions of its first sheet (loop.py)."""
    ledger_upto: int = 0
    """How many ledger records the selection saw: with the ledger, this makes it exact."""
    ledger: str | None = None
    """The ledger file, when not the default one."""

    def selection_key(self) -> str:
        """What the selection and the sheet ID depend on: the command, less where the ledger
        file lives (what it says comes in through Exposure), so that a copied ledger gives the
        same sheet."""
        return replace(self, ledger=None,
                       candidate=None if self.loop else self.candidate).command()

    def command(self) -> str:
        """The `ptbank sheet` arguments that regenerate this selection."""
        parts = ["ptbank", "sheet"]
        parts += ["--profile", self.profile] if self.profile else ["--level", self.level.value]
        parts += ["--seed", str(self.seed)]
        parts += ["--minutes", str(self.minutes)] if self.minutes else ["--count", str(self.count)]
        if self.topics:
            parts += ["--topics", ",".join(self.topics)]
        if self.exclude:
            parts += ["--exclude", ",".join(self.exclude)]
        if self.loop is not None:
            parts += ["--loop", self.loop]
        if self.candidate is not None:
            parts += ["--candidate", self.candidate]
        if self.ledger:
            parts += ["--ledger", self.ledger]
        parts += ["--ledger-upto", str(self.ledger_upto)]
        return shlex.join(parts)


@dataclass(frozen=True)
class Exposure:
    """What the ledger says, as far as the selection sees it."""

    counts: Counter = field(default_factory=Counter)
    """Question id → sheets that gave it."""
    given: frozenset[str] = frozenset()
    """Questions the candidate has already had."""

    def digest(self) -> str:
        state = json.dumps([sorted(self.counts.items()), sorted(self.given)])
        return hashlib.sha256(state.encode()).hexdigest()


def sheet_id(bank: Bank, request: SheetRequest, seen: Exposure | None = None) -> str:
    """Eight characters naming (bank version, request, seed, exposure), e.g. `K3QF-7ZMA`."""
    return _short_id(f"{bank.meta.version}|{request.selection_key()}|"
                     f"{(seen or Exposure()).digest()}")


def _short_id(key: str) -> str:
    code = base64.b32encode(hashlib.sha256(key.encode()).digest()).decode()[:8]
    return f"{code[:4]}-{code[4:]}"


def select_questions(bank: Bank, request: SheetRequest,
                     seen: Exposure | None = None) -> list[Question]:
    """The sheet's questions, in print order: a pure function of its arguments."""
    return draw_sheet(bank, request, seen).questions


def draw_sheet(bank: Bank, request: SheetRequest, seen: Exposure | None = None) -> Draw:
    """The sheet's questions in print order, and what of its profile's mix it could not fill.

    With a profile, profile_draw.py draws the mix scaled to the budget; with a level, the
    budget (or count) gets a topic mix and at most one coding task (first, if it fits). Either
    way the least used questions come first, never two on the same seed item, and excluded ids
    or the candidate's earlier questions never appear.
    """
    seen = seen or Exposure()
    if request.profile:
        drawn = profile_selection(bank, request, seen)
    else:
        drawn = Draw(_level_selection(bank, request, seen))
    topic_rank = {t: i for i, t in enumerate(bank.topics)}
    ordered = sorted(drawn.questions, key=lambda q: (q.kind is Kind.coding, topic_rank[q.topic]))
    return replace(drawn, questions=ordered)


def _level_selection(bank: Bank, request: SheetRequest, seen: Exposure) -> list[Question]:
    pool = _candidates(bank, request, seen)
    rng = random.Random(f"{bank.meta.version}|{request.selection_key()}")
    coding = [q for q in pool if q.kind is Kind.coding]
    concept = _topic_round_robin([q for q in pool if q.kind is Kind.concept], rng, seen)
    rng.shuffle(coding)
    coding.sort(key=lambda q: seen.counts[q.id])  # stable: least used first, shuffled within
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
    return chosen


def profile_selection(bank: Bank, request: SheetRequest, seen: Exposure) -> Draw:
    """The budget less the profile's buffer, drawn as profile_draw.py describes."""
    profile = _profile(bank, request.profile)
    if request.minutes is None:
        raise PtbankError("--profile fills a time budget: give --minutes, not --count")
    usable = request.minutes - profile.buffer_minutes
    if usable < 1:
        raise PtbankError(f"profile {request.profile} keeps {profile.buffer_minutes} minutes "
                          f"as a buffer: --minutes must be more than that")
    rng = random.Random(f"{bank.meta.version}|{request.selection_key()}|{seen.digest()}")
    return draw_for_profile(bank, request.profile, usable=usable, rng=rng, counts=seen.counts,
                            given=seen.given, exclude=request.exclude,
                            note=_seen_note(request))


def _profile(bank: Bank, name: str):
    if name not in bank.profiles:
        known = ", ".join(bank.profiles) or "none: the content folder has no profiles.yaml"
        raise PtbankError(f"unknown profile {name!r}; profiles: {known}")
    return bank.profiles[name]


def _shares(weights: dict) -> dict:
    total = sum(weights.values())
    return {key: value / total for key, value in weights.items()}


def _seen_note(request: SheetRequest) -> str:
    notes = []
    if request.exclude:
        notes.append(f"after excluding {len(request.exclude)} question(s)")
    if request.candidate is not None:
        notes.append(f"and what {request.candidate!r} was given before")
    return (" " + " ".join(notes)) if notes else ""


def _candidates(bank: Bank, request: SheetRequest, seen: Exposure) -> list[Question]:
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
            and q.id not in seen.given and (not request.topics or q.topic in request.topics)]
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


def _topic_round_robin(questions: list[Question], rng: random.Random,
                       seen: Exposure) -> list[Question]:
    """Shuffle within topics (least used last, as they are dealt from the end), then deal one
    per topic in turn, so a sheet mixes topics."""
    by_topic: dict[str, list[Question]] = {}
    for q in sorted(questions, key=lambda q: q.id):
        by_topic.setdefault(q.topic, []).append(q)
    topics = sorted(by_topic)
    rng.shuffle(topics)
    for topic in topics:
        rng.shuffle(by_topic[topic])
        by_topic[topic].sort(key=lambda q: -seen.counts[q.id])
    dealt = []
    while any(by_topic.values()):
        for topic in topics:
            if by_topic[topic]:
                dealt.append(by_topic[topic].pop())
    return dealt


def build_sheet(bank: Bank, args, reports, records: list[LedgerRecord]
                ) -> tuple[list[Artifact], LedgerRecord | None]:
    """Both editions of one sheet in the requested formats, drawn against the ledger's
    `records`, as artifacts to write, and the ledger record to append once they are written
    (None when regenerating an earlier sheet)."""
    order = {topic: rank for rank, topic in enumerate(bank.topics)}
    topics = sorted(set(args.topics or ()), key=lambda t: (order.get(t, len(order)), t))
    ledger_path = args.ledger or args.out / LEDGER_NAME
    upto = len(records) if args.ledger_upto is None else args.ledger_upto
    if upto > len(records):
        raise PtbankError(f"--ledger-upto {upto}: {ledger_path} holds {len(records)} record(s)")
    all_records, records = records, records[:upto]
    request = SheetRequest(level=args.level and Level(args.level), seed=args.seed,
                           minutes=args.minutes, count=args.count,
                           topics=tuple(topics),  # the same set, one order
                           exclude=tuple(sorted(set(args.exclude))), profile=args.profile,
                           candidate=args.candidate, ledger_upto=upto,
                           ledger=str(args.ledger) if args.ledger else None,
                           loop=getattr(args, "loop", None))
    seen = Exposure(exposure(records), frozenset(given_to(records, args.candidate)))
    loop = getattr(args, "loop", None)
    base = loop_base(sheets(records), loop) if loop else None
    if base is None:
        drawn = draw_sheet(bank, request, seen)
        ident = sheet_id(bank, request, seen)
    else:  # a later candidate of the loop: its first sheet's questions
        chosen, substitutes = loop_questions(bank, base, seen.given, seen.counts,
                                             args.profile, args.level)
        drawn = Draw(chosen, substitutes=tuple(substitutes))
        ident = base.sheet if not substitutes else _substituted_id(base.sheet, substitutes)
    questions = drawn.questions
    variants = sheet_variants(ident, questions, records_before=records, all_records=all_records)
    solved = Solved(bank, reports)
    stamp = stamp_for(reports, questions)
    formats = PRINT_FORMATS if args.format == "all" else (args.format,)
    artifacts = []
    for edition in ("candidate", "interviewer"):
        def printed(q: Question, edition=edition) -> Question:
            note = ({lang: _variant_note(q, variants[q.id], lang) for lang in ("zh", "en")}
                    if edition == "interviewer" and q.id in variants else None)
            return solved.printed(q, variants.get(q.id, 0), note)
        doc = sheet_document(bank, request, ident, drawn, args.lang, edition, stamp,
                             base.sheet if base else None, printed)
        markdown = render_markdown(f"sheet-{edition}.md.j2", doc)
        name = f"sheet-{ident}-{edition}-{args.lang}"  # one sheet, printed in several languages
        artifacts += [Artifact(args.out / f"{name}.{fmt}", fmt, markdown, doc)
                      for fmt in formats]
    issued = None if args.ledger_upto is not None else LedgerRecord(
        sheet=ident, date=build_date(), candidate=args.candidate, profile=args.profile,
        level=args.level, loop=loop, questions=[q.id for q in questions],
        command=request.command(), variants=variants)
    return artifacts, issued


def _variant_note(q: Question, index: int, lang: str) -> str:
    """What the interviewer edition says under a parametrized question: which variant, and
    how close a candidate's number must be (the loosest of its answers' rtol)."""
    note = label(lang, "variant_sheet", index=index, n=VARIANTS)
    rtol = max((a.rtol for a in q.answers.values()), default=0)
    if rtol:
        gap = "" if lang == "zh" else " "
        note += gap + label(lang, "variant_tolerance", rtol=f"{rtol * 100:g}%")
    return note


def sheet_variants(ident: str, questions: list[Question], *, records_before, all_records
                   ) -> dict[str, int]:
    """The variant of each parametrized question on sheet `ident`: what the ledger recorded
    for it when it was issued (regenerating), else hashed from (sheet ID, question id). The
    sheet ID is a function of its seed and request, and loop candidates share their loop's."""
    issued = next((r.variants for r in all_records[len(records_before):]
                   if isinstance(r, LedgerRecord) and r.sheet == ident and r.variants), {})
    return {q.id: issued.get(q.id) or variant_for(ident, q.id) for q in questions if q.params}


def _substituted_id(base: str, substitutes) -> str:
    """The loop sheet's ID with the substitutions in it: another sheet, said to be one."""
    return _short_id(base + "|" + "|".join(f"{s.replaced.id}>{s.by.id}" for s in substitutes))


def sheet_document(bank: Bank, request: SheetRequest, ident: str, drawn: Draw,
                   lang: str, edition: str, stamp: Stamp,
                   base_sheet: str | None = None, printed=lambda q: q) -> Document:
    """One edition of the sheet; `printed` gives each question as this sheet prints it (its
    variant's numbers filled in)."""
    questions = drawn.questions
    langs = ("zh", "en") if lang == "bi" else (lang,)
    names = {key: {"zh": topic.zh, "en": topic.en} for key, topic in bank.topics.items()}
    items = [Item(f"{n}.", printed(q), names[q.topic], langs)
             for n, q in enumerate(questions, 1)]
    first = langs[0]
    title = f"{label(first, 'sheet_title')} {ident}"
    profile = bank.profiles[request.profile] if request.profile else None
    what = getattr(profile.name, first) if profile else label(first, request.level.value)
    return Document(
        title=title,
        subtitle=f"{what} · {label(first, 'sheet_' + edition)}",
        langs=langs, answers=edition == "interviewer",
        stamp=stamp, version=bank.meta.version, date=build_date(), kind="sheet",
        sections=[Section(1, {"zh": "", "en": ""}, items, langs)],
        references=references_for(bank),
        extra={"sheet_id": ident, "command": request.command(),
               "total_minutes": sum(q.minutes for q in questions),
               "budget": request.minutes,
               "buffer": profile.buffer_minutes if profile else None,
               "weights": _weights_line(bank, profile, first) if profile else None,
               "plan": [{"number": r.number, "start": r.start, "weight": r.weight,
                         "competency": _competency_name(bank, r.competency, first)}
                        for r in plan(questions)],
               "competencies": [{"name": _competency_name(bank, c.key, first),
                                 "numbers": ", ".join(map(str, c.numbers)),
                                 "weight": c.weight}
                                for c in competencies(plan(questions))],
               "loop": request.loop,
               "loop_base": base_sheet,
               "substitutes": [label(first, "substitute", n=questions.index(s.by) + 1,
                                     old=s.replaced.text(first).title)
                               for s in drawn.substitutes],
               "shortfalls": [label(first, "shortfall_time" if f.shortest else
                                    "shortfall_none", level=label(first, f.level.value),
                                    wanted=f.wanted, got=f.got, shortest=f.shortest)
                              for f in drawn.shortfalls]},
    )


def _competency_name(bank: Bank, key: str, lang: str) -> str:
    """The topic's name up to its colon ("Distributed training"), or Coding for a task."""
    if key == CODING:
        return label(lang, "coding_competency")
    return re.split(r"[:：]", getattr(bank.topics[key], lang))[0].strip()


def _weights_line(bank: Bank, profile, lang: str) -> str:
    """The profile's mix as the interviewer edition prints it."""
    separator = label(lang, "list_separator")
    topics = separator.join(f"{getattr(bank.topics[t], lang)} {w:g}"
                            for t, w in profile.topics.items())
    levels = separator.join(f"{label(lang, lv.value)} {n}"
                            for lv, n in profile.levels.items() if n)
    coding = (label(lang, "profile_coding", share=f"{profile.coding.share:.0%}")
              if profile.coding.include else label(lang, "profile_no_coding"))
    return label(lang, "profile_weights", topics=topics, levels=levels, coding=coding)

"""Loop sheets: every candidate of one interview loop gets the same calibrated sheet.

The first sheet issued with `--loop NAME` is drawn as any sheet is and recorded with the loop's
name; every later sheet of that loop takes its questions from that record, so the loop's
candidates answer the same questions and can be compared. A candidate the ledger already gave
one of them gets a stated substitute instead: the least used question of the same kind, level
and topic (else of the same kind and level) that fits the time the replaced one took, shares no
seed item with the rest, and is new to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PtbankError
from .ledger import LedgerRecord
from .models import Bank, Question


@dataclass(frozen=True)
class Substitute:
    replaced: Question
    by: Question


def loop_base(records: list[LedgerRecord], loop: str) -> LedgerRecord | None:
    """The loop's first sheet, whose questions every later sheet of the loop takes."""
    return next((r for r in records if r.loop == loop), None)


def loop_questions(bank: Bank, base: LedgerRecord, given: frozenset[str], counts,
                   profile: str | None, level: str | None) -> tuple[list[Question],
                                                               list[Substitute]]:
    """The base sheet's questions, with a substitute for each the candidate has had."""
    if base.profile != profile or base.level != level:
        raise PtbankError(f"loop {base.loop!r} was drawn as {base.command!r}: give the same "
                          "--profile or --level for its other candidates")
    known = {q.id: q for q in bank.questions}
    missing = [qid for qid in base.questions if qid not in known]
    if missing:
        raise PtbankError(f"loop {base.loop!r}: its sheet {base.sheet} names questions no longer "
                          f"in the bank: {', '.join(missing)}")
    questions = [known[qid] for qid in base.questions]
    substitutes = []
    for index, question in enumerate(questions):
        if question.id not in given:
            continue
        others = questions[:index] + questions[index + 1:]
        by = _substitute(bank, question, others, given, counts)
        if by is None:
            raise PtbankError(f"loop {base.loop!r}: the candidate had {question.id} before, and "
                              f"no {question.level.value} {question.kind.value} question of "
                              f"{question.minutes} minutes or less is left to replace it")
        questions[index] = by
        substitutes.append(Substitute(question, by))
    return questions, substitutes


def _substitute(bank: Bank, question: Question, others: list[Question], given: frozenset[str],
                counts) -> Question | None:
    taken = {s for q in others for s in q.seed}
    on_sheet = {q.id for q in others} | {question.id}
    fitting = [q for q in bank.questions
               if q.kind is question.kind and q.level is question.level
               and q.minutes <= question.minutes and q.id not in on_sheet
               and q.id not in given and not taken & set(q.seed)]
    same_topic = [q for q in fitting if q.topic == question.topic]
    pool = same_topic or fitting
    return min(pool, key=lambda q: (counts[q.id], -q.minutes, q.id), default=None)

"""The interviewer's plan and scorecard: when each question starts, what competency it is
evidence for, and how much its 1–4 score weighs.

A question weighs its share of the sheet's minutes, so a 20-minute coding task counts five
times a 4-minute warm-up; a competency weighs the sum of its questions. Communication is rated
once across the interview and stands beside the weighted score, not in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import Kind, Question

CODING = "coding"
"""The competency of every coding task, whatever its topic."""


@dataclass(frozen=True)
class PlanRow:
    number: int
    question: Question
    start: int
    """Minute of the interview the question starts at (after the introductions' buffer is
    spent at the end, not the start)."""
    competency: str
    """A topic key, or CODING."""
    weight: float
    """Share of the weighted score, in [0, 1]."""


@dataclass(frozen=True)
class Competency:
    key: str
    numbers: tuple[int, ...]
    weight: float


def plan(questions: list[Question]) -> list[PlanRow]:
    total = sum(q.minutes for q in questions) or 1
    rows, start = [], 0
    for number, q in enumerate(questions, 1):
        rows.append(PlanRow(number, q, start, CODING if q.kind is Kind.coding else q.topic,
                            q.minutes / total))
        start += q.minutes
    return rows


def competencies(rows: list[PlanRow]) -> list[Competency]:
    """Each competency of the sheet, heaviest first, with its questions and weight."""
    keys = dict.fromkeys(r.competency for r in rows)
    found = [Competency(key, tuple(r.number for r in rows if r.competency == key),
                        sum(r.weight for r in rows if r.competency == key)) for key in keys]
    return sorted(found, key=lambda c: -c.weight)


def weighted_score(rows: list[PlanRow], scores: dict[int, int]) -> float:
    """Σ weight × score over the questions scored (1–4), renormalised over those scored: what
    the scorecard asks the interviewer to work out."""
    scored = [r for r in rows if r.number in scores]
    weight = sum(r.weight for r in scored)
    if not weight:
        raise ValueError("no question scored")
    return sum(r.weight * scores[r.number] for r in scored) / weight

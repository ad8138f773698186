"""Which questions a document holds, and in what order: topics as in topics.yaml, then level."""

from __future__ import annotations

from .models import LEVELS, Bank, Level, Question


def questions_for_level(bank: Bank, level: Level | None) -> list[Question]:
    """Questions of one level (or all when `level` is None), in print order.

    Print order is topics.yaml order, then level (beginner first), then file order.
    """
    topic_rank = {topic: rank for rank, topic in enumerate(bank.topics)}
    level_rank = {lvl: rank for rank, lvl in enumerate(LEVELS)}
    chosen = [q for q in bank.questions if level is None or q.level is level]
    return sorted(chosen, key=lambda q: (topic_rank[q.topic], level_rank[q.level]))

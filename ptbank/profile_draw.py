"""Drawing a sheet for a role profile: the level counts its mix states, scaled to the budget,
topics in proportion to their weights, the coding task included, and the least used
questions first.

How the draw stays true to the role with only 5–7 questions a sheet:
1. The coding task comes first. Its topic is drawn in proportion to the profile's weights
   among the topics that have a task that fits (`coding.share` of the time) and carries one of
   `coding.tags`; within that topic the least used task is taken. So over many sheets the tasks
   follow the weights, and no task outside the role's tags is ever drawn.
2. The sheet's size n is the largest for which the draw below fits the time. For that n the
   level counts are the mix scaled to n by largest remainders (the coding task counts towards
   its level) and the topic counts are the weights scaled to n the same way: the largest
   weights are served first, so a weight-4 topic of a 6-question sheet gets 2 questions and a
   weight-1 topic gets one only when a remainder is left for it.
3. Slot by slot: the level furthest below its count; among that level's topics, the one
   furthest below its count (then the least used question, then the seeded order); its least
   used question, if it leaves time for the slots still to fill. A question whose seed item is
   already on the sheet, or with an excluded tag, is never drawn.
4. If no n can be drawn exactly (the bank lacks questions of a level in the role's topics),
   the largest that fits is drawn as near as it can, and the sheet says which count it could
   not fill and why (`Draw.shortfalls`).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from .errors import PtbankError
from .models import Bank, Kind, Level, Question


@dataclass(frozen=True)
class Shortfall:
    """A level count the sheet could not fill, and why."""

    level: Level
    wanted: int
    got: int
    shortest: int | None
    """Minutes of the shortest question of the level left to draw; None when none is left."""


@dataclass(frozen=True)
class Draw:
    questions: list[Question]
    shortfalls: tuple[Shortfall, ...] = ()
    level_counts: dict[Level, int] | None = None
    """The counts the mix asked for at this size."""
    substitutes: tuple = ()
    """A loop sheet's substitutes (loop.Substitute) for questions the candidate had before."""


def apportion(weights: dict, seats: int, tiebreak: dict | None = None) -> dict:
    """`seats` shared in proportion to `weights` by largest remainders; equal remainders go
    by `tiebreak` (smallest first; default: in order), so that a seeded order lets each
    equal weight have its turn across sheets."""
    total = sum(weights.values())
    exact = {key: seats * w / total for key, w in weights.items()}
    given = {key: int(share) for key, share in exact.items()}
    rank = tiebreak or {key: index for index, key in enumerate(weights)}
    order = sorted(weights, key=lambda k: (-round(exact[k] - given[k], 9), rank[k]))
    for key in order[:seats - sum(given.values())]:
        given[key] += 1
    return given


def draw_for_profile(bank: Bank, profile_name: str, *, usable: int, rng: random.Random,
                     counts: Counter, given: frozenset[str], exclude: tuple[str, ...],
                     note: str = "") -> Draw:
    profile = bank.profiles[profile_name]
    levels = {lv: n for lv, n in profile.levels.items() if n}
    banned = set(profile.exclude_tags)
    pool = [q for q in bank.questions
            if q.topic in profile.topics and q.level in levels and q.id not in exclude
            and q.id not in given and not banned & set(q.tags)]
    tiebreak = {q.id: rng.random() for q in pool}

    def least_used(questions) -> Question | None:
        return min(questions, key=lambda q: (counts[q.id], tiebreak[q.id]), default=None)

    chosen: list[Question] = []
    if profile.coding.include:
        task = _coding_task(profile, pool, usable, rng, least_used, profile_name, note)
        chosen.append(task)
    concept = [q for q in pool if q.kind is Kind.concept]
    if not concept:
        raise PtbankError(f"profile {profile_name}: the bank has no concept questions in "
                          f"its topics ({', '.join(profile.topics)}) and levels "
                          f"({', '.join(lv.value for lv in levels)}){note}")
    left = usable - sum(q.minutes for q in chosen)
    shortest = min(q.minutes for q in concept)
    if shortest > left:
        raise PtbankError(f"profile {profile_name}: no concept question fits the {left} "
                          f"minutes left (the shortest takes {shortest})")
    topics = {t: w for t, w in profile.topics.items() if any(q.topic == t for q in pool)}
    order = {t: rng.random() for t in topics}
    filler = _Filler(concept, least_used, counts, order)
    biggest = len(chosen) + left // shortest

    def level_counts(size: int) -> dict:
        return _level_counts(levels, size, chosen[0].level if chosen else None)

    def attempt(size: int, strict: bool) -> list[Question] | None:
        return filler.fill(chosen, size, level_counts(size), apportion(topics, size, order),
                           usable, strict=strict)

    for size in range(biggest, len(chosen), -1):
        exact = attempt(size, strict=True)
        if exact is not None:
            return Draw(exact, (), level_counts(size))
    largest, near = len(chosen) + 1, chosen
    for size in range(biggest, len(chosen), -1):  # the largest sheet a relaxed draw fits
        relaxed = attempt(size, strict=False)
        if relaxed is not None:
            largest, near = size, relaxed
            break
    wanted = level_counts(largest)
    got = Counter(q.level for q in near)
    shortfalls = tuple(
        Shortfall(lv, n, got[lv], min((q.minutes for q in concept if q.level is lv
                                       and q not in near), default=None))
        for lv, n in wanted.items() if got[lv] < n)
    return Draw(near, shortfalls, wanted)


def _level_counts(levels: dict, size: int, coding: Level | None) -> dict:
    """The mix scaled to `size`; the coding task's level gets at least its one question."""
    counts = apportion(levels, size)
    if coding is not None and counts.get(coding, 0) == 0:
        counts[max((lv for lv in counts if lv is not coding), key=lambda lv: counts[lv])] -= 1
        counts[coding] = 1
    return counts


class _Filler:
    """Fills a sheet of a given size slot by slot (step 3 of the module's description)."""

    def __init__(self, concept, least_used, counts, topic_order):
        self.concept, self.least_used, self.counts = concept, least_used, counts
        self.topic_order = topic_order
        self.shortest = {lv: min((q.minutes for q in concept if q.level is lv), default=None)
                         for lv in Level}

    def fill(self, start: list[Question], size: int, levels: dict, topics: dict, usable: int,
             strict: bool) -> list[Question] | None:
        chosen = list(start)
        while len(chosen) < size:
            level_count = Counter(q.level for q in chosen)
            topic_count = Counter(q.topic for q in chosen)
            need = {lv: n - level_count[lv] for lv, n in levels.items() if n > level_count[lv]}
            picked = None
            for level in sorted(need, key=lambda lv: -need[lv]):
                picked = self._pick(chosen, level, size, need, topics, topic_count, usable)
                if picked is not None or strict:
                    break
            if picked is None and not strict:  # a level that cannot be filled: the others
                for level in (lv for lv in levels if lv not in need):
                    picked = self._pick(chosen, level, size, need, topics, topic_count, usable)
                    if picked is not None:
                        break
            if picked is None:
                return None
            chosen.append(picked)
        return chosen

    def _pick(self, chosen, level, size, need, topics, topic_count, usable):
        """The least used question of `level` in the topic furthest below its count that
        leaves time for the slots still open."""
        left = usable - sum(q.minutes for q in chosen)
        after = dict(need)
        after[level] = after.get(level, 1) - 1
        reserve = sum(max(n, 0) * (self.shortest[lv] or 0) for lv, n in after.items())
        reserve = min(reserve, (size - len(chosen) - 1) * min(
            m for m in self.shortest.values() if m is not None))
        taken = {s for q in chosen for s in q.seed}
        fitting = [q for q in self.concept if q.level is level and q not in chosen
                   and q.minutes + reserve <= left and not taken & set(q.seed)]
        by_topic: dict[str, list[Question]] = {}
        for q in fitting:
            by_topic.setdefault(q.topic, []).append(q)
        if not by_topic:
            return None
        topic = min(by_topic, key=lambda t: (-(topics.get(t, 0) - topic_count[t]),
                                             self.counts[self.least_used(by_topic[t]).id],
                                             self.topic_order.get(t, 1.0)))
        return self.least_used(by_topic[topic])


def role_task(profile, question: Question) -> bool:
    """Whether a sheet for this profile may draw `question` as its coding task, at a level
    and in a time the profile allows: a task of the role's topics that carries one of its
    coding tags (any, where it names none) and none of the tags it excludes."""
    wanted = set(profile.coding.tags)
    return (question.kind is Kind.coding and question.topic in profile.topics
            and not set(profile.exclude_tags) & set(question.tags)
            and (not wanted or bool(wanted & set(question.tags))))


def _coding_task(profile, pool, usable, rng, least_used, name, note) -> Question:
    limit = int(profile.coding.share * usable)
    wanted = set(profile.coding.tags)
    tasks = [q for q in pool if role_task(profile, q) and q.minutes <= limit]
    if not tasks:
        tags = f" carrying one of its coding tags ({', '.join(profile.coding.tags)})" \
            if wanted else ""
        raise PtbankError(f"profile {name}: no coding task in its topics and levels{tags} "
                          f"fits {limit} minutes ({profile.coding.share:.0%} of {usable}){note}")
    by_topic: dict[str, list[Question]] = {}
    for q in tasks:
        by_topic.setdefault(q.topic, []).append(q)
    names = sorted(by_topic)
    topic = rng.choices(names, weights=[profile.topics[t] for t in names])[0]
    return least_used(by_topic[topic])

"""`ptbank stats`: what the bank holds, by level × topic × kind, and how much of the seed it covers."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from .models import LEVELS, Bank, Kind, Level
from .profile_draw import role_task

SEED_ITEMS: tuple[str, ...] = (
    tuple(f"q{n}" for n in range(1, 37))
    + tuple(f"task-{c}" for c in "abcde")
    + tuple(f"bonus-{n}" for n in range(1, 6))
)
"""The 46 items of the user's seed list, in its order."""

TASKS_PER_ROLE_LEVEL = 8
"""Coding tasks each role profile should have of its own at intermediate and at advanced: a
hiring manager giving many sheets for one role needs that many before candidates meet the
same task twice in a week of interviews, and the content issue of 2026 set it as the floor."""
QUOTA_LEVELS = (Level.intermediate, Level.advanced)


def print_stats(bank: Bank, console: Console | None = None) -> None:
    console = console or Console()
    counts = Counter((q.topic, q.level, q.kind) for q in bank.questions)
    table = Table(title=f"{bank.meta.title.en} {bank.meta.version}: questions")
    table.add_column("topic")
    for level in LEVELS:
        table.add_column(level.value, justify="right")
    table.add_column("coding", justify="right")
    table.add_column("total", justify="right")
    for topic in bank.topics:
        by_level = [sum(counts[(topic, level, kind)] for kind in Kind) for level in LEVELS]
        coding = sum(counts[(topic, level, Kind.coding)] for level in LEVELS)
        table.add_row(topic, *map(str, by_level), str(coding), str(sum(by_level)))
    totals = [sum(1 for q in bank.questions if q.level is level) for level in LEVELS]
    coding_total = sum(1 for q in bank.questions if q.kind is Kind.coding)
    table.add_row("[b]all[/b]", *map(str, totals), str(coding_total), str(len(bank.questions)))
    console.print(table)

    snippets = [s for q in bank.questions for s in q.snippets]
    shown = Counter(s.show.value for s in snippets)
    minutes = {level.value: sum(q.minutes for q in bank.questions if q.level is level)
               for level in LEVELS}
    console.print(f"snippets: {len(snippets)} ("
                  + ", ".join(f"{k} {v}" for k, v in sorted(shown.items())) + ")")
    console.print("minutes: " + ", ".join(f"{k} {v}" for k, v in minutes.items())
                  + f", total {sum(minutes.values())}")
    if bank.profiles:
        console.print(role_task_table(bank))
    covered = {item for q in bank.questions for item in q.seed}
    missing = [item for item in SEED_ITEMS if item not in covered]
    console.print(f"seed coverage: {len(SEED_ITEMS) - len(missing)}/{len(SEED_ITEMS)}"
                  + (f"; missing: {', '.join(missing)}" if missing else ""))


def role_task_table(bank: Bank) -> Table:
    """Coding tasks a sheet for each profile can draw, by level, against the floor."""
    floor = " and ".join(level.value for level in QUOTA_LEVELS)
    table = Table(title=f"coding tasks per profile (floor {TASKS_PER_ROLE_LEVEL}: {floor})")
    table.add_column("profile")
    for level in LEVELS:
        table.add_column(level.value, justify="right")
    for name, profile in bank.profiles.items():
        tasks = Counter(q.level for q in bank.questions if role_task(profile, q))
        cells = []
        for level in LEVELS:
            short = level in QUOTA_LEVELS and tasks[level] < TASKS_PER_ROLE_LEVEL
            cells.append(f"[red]{tasks[level]} (short)[/red]" if short else str(tasks[level]))
        table.add_row(name, *cells)
    return table

"""The sheet ledger: an append-only record of every interview sheet issued, one JSON line each.

It is what exposure control reads: how often each question has been given (a new sheet prefers
the least used) and what each candidate has already seen (a new sheet never repeats it). A
sheet is issued under an exclusive lock held from reading the ledger to appending its record
(`held_ledger`), so that two sheets drawn at once for one candidate cannot both miss the
other. A record is appended only after the sheet's files are written, with one `write` of one
whole line and an fsync, and the file is never rewritten: a crash can at worst leave a
half-written last line, which the next run names (file:line) instead of guessing, and every
earlier record stays as it was.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import PtbankError


class LedgerRecord(BaseModel):
    """One sheet as issued."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    sheet: str
    """The sheet ID printed on both editions."""
    date: str
    """The day it was issued (YYYY-MM-DD)."""
    candidate: str | None = None
    """`--candidate`: whoever it was given to, as the interviewer labels them."""
    profile: str | None = None
    """The role profile it was drawn for, if any."""
    level: str | None = None
    """The level it was drawn for (`--level`), if any."""
    loop: str | None = None
    """`--loop`: the interview loop whose candidates all get this sheet's questions."""
    questions: list[str] = Field(min_length=1)
    """Question ids, in the order printed."""
    command: str
    """The command that regenerates it."""
    variants: dict[str, int] = {}
    """Parametrized question id → the variant this sheet gave (variants.py)."""


class GradeRecord(BaseModel):
    """One submission graded against a coding task of a sheet (`ptbank grade --sheet`)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    grade: str
    """The task (question id) graded."""
    sheet: str
    """The sheet it was on."""
    candidate: str
    date: str
    points: float
    max_points: float
    checks: dict[str, str]
    """Check number → outcome (passed, failed, error, memory, timeout, crashed, not_run)."""
    sha256: str
    """Of the submission graded: which file the points are for."""
    torch: str


Entry = LedgerRecord | GradeRecord


def read_ledger(path: Path) -> list[Entry]:
    """Every record, oldest first; an absent ledger is empty, a damaged line an error."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PtbankError(f"{path}: cannot read the ledger ({exc.strerror})") from None
    lines = raw.split(b"\n")
    if lines[-1]:
        raise _damaged(path, len(lines), "half-written (no line end): a sheet was being "
                       "recorded when the process stopped")
    records = []
    for number, line in enumerate(lines[:-1], 1):
        try:
            data = json.loads(line.decode("utf-8"))
            kind = GradeRecord if isinstance(data, dict) and "grade" in data else LedgerRecord
            records.append(kind.model_validate(data))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(map(str, error["loc"])) or "record"
            raise _damaged(path, number, f"{where}: {error['msg']}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise _damaged(path, number, f"not a JSON record ({exc})") from None
    return records


class HeldLedger:
    """The ledger while this process holds its lock: the records as read under it, and the
    one way to add one."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = path, fd
        self.records = read_ledger(path)

    def append(self, record: Entry) -> None:
        """Add one record at the end: one write of one whole line, synced."""
        line = (json.dumps(record.model_dump(), ensure_ascii=False, sort_keys=True)
                + "\n").encode()
        if os.write(self._fd, line) != len(line):
            raise PtbankError(f"{self.path}: the record could not be written whole (disk full?)")
        os.fsync(self._fd)
        self.records = [*self.records, record]


@contextmanager
def held_ledger(path: Path) -> Iterator[HeldLedger]:
    """The ledger (created if absent), locked exclusively until the block ends: read, select
    and append in it, and no other sheet reads the ledger in between.

    Raises on a damaged line, so that nothing is drawn from or built on a ledger that cannot
    be read back.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield HeldLedger(path, fd)
    finally:
        os.close(fd)  # releases the lock


def read_ledger_now(path: Path) -> list[LedgerRecord]:
    """read_ledger between two appends (under a shared lock), never halfway through one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PtbankError(f"{path}: cannot read the ledger ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return read_ledger(path)
    finally:
        os.close(fd)


def append_record(path: Path, record: Entry) -> None:
    """Add one record at the end, under the lock (refused after a damaged line)."""
    with held_ledger(path) as ledger:
        ledger.append(record)


def sheets(records: list[Entry]) -> list[LedgerRecord]:
    """The records of sheets issued, without the grades."""
    return [r for r in records if isinstance(r, LedgerRecord)]


def grades(records: list[Entry]) -> list[GradeRecord]:
    return [r for r in records if isinstance(r, GradeRecord)]


def exposure(records: list[Entry]) -> Counter:
    """Question id → how many sheets gave it."""
    return Counter(qid for record in sheets(records) for qid in record.questions)


def given_to(records: list[Entry], candidate: str | None) -> set[str]:
    """Every question a candidate has been given (none for an unnamed candidate)."""
    if candidate is None:
        return set()
    return {qid for record in sheets(records) if record.candidate == candidate
            for qid in record.questions}


def print_exposure(bank, entries: list[Entry], console) -> None:
    """Exposure per question (most given first) and per profile, as tables."""
    from rich.table import Table

    records = sheets(entries)
    counts = exposure(records)
    if not records:
        console.print("the ledger is empty: no sheet has been issued yet")
        return
    table = Table(title=f"exposure per question ({len(records)} sheets)")
    for column in ("question", "topic", "level", "given", "candidates"):
        table.add_column(column, justify="right" if column in ("given", "candidates") else "left")
    known = {q.id: q for q in bank.questions}
    for qid, given in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        q = known.get(qid)
        people = {r.candidate for r in records if qid in r.questions and r.candidate}
        table.add_row(qid, q.topic if q else "(no longer in the bank)",
                      q.level.value if q else "", str(given), str(len(people)))
    console.print(table)
    profiles = Table(title="exposure per profile")
    for column in ("profile", "sheets", "candidates", "questions used", "eligible",
                   "given min–max"):
        profiles.add_column(column)
    for name in sorted({r.profile or "(by level)" for r in records}):
        mine = [r for r in records if (r.profile or "(by level)") == name]
        used = exposure(mine)
        profile = bank.profiles.get(name)
        eligible = [q.id for q in bank.questions if profile and q.topic in profile.topics
                    and profile.levels.get(q.level, 0)]
        spread = [used[q] for q in eligible] or list(used.values())
        profiles.add_row(name, str(len(mine)), str(len({r.candidate for r in mine
                                                         if r.candidate})),
                         str(len(used)), str(len(eligible)) if profile else "",
                         f"{min(spread)}–{max(spread)}")
    console.print(profiles)
    print_grade_statistics(grades(entries), console)


def grade_statistics(records: list[GradeRecord]) -> list[dict]:
    """Per task graded: how many grades and candidates, the mean score, and how often each
    check failed, which tells the check that separates candidates from the one everyone
    passes. A candidate graded twice for one sheet counts by the last grade."""
    last = {}
    for record in records:
        last[(record.grade, record.sheet, record.candidate)] = record
    rows = []
    for task in sorted({r.grade for r in last.values()}):
        mine = [r for r in last.values() if r.grade == task]
        numbers = sorted({n for r in mine for n in r.checks}, key=int)
        rows.append({
            "task": task, "grades": len(mine),
            "candidates": len({r.candidate for r in mine}),
            "mean": sum(r.points / r.max_points for r in mine if r.max_points) / len(mine),
            "fails": {n: sum(r.checks.get(n) != "passed" for r in mine) / len(mine)
                      for n in numbers}})
    return rows


def print_grade_statistics(records: list[GradeRecord], console) -> None:
    from rich.table import Table

    rows = grade_statistics(records)
    if not rows:
        return
    table = Table(title="grades per task (the last grade of each candidate and sheet)")
    for column in ("task", "grades", "candidates", "mean score", "failed, per check"):
        table.add_column(column)
    for row in rows:
        fails = "  ".join(f"{n}: {share:.0%}" for n, share in row["fails"].items())
        table.add_row(row["task"], str(row["grades"]), str(row["candidates"]),
                      f"{row['mean']:.0%}", fails)
    console.print(table)


def _damaged(path: Path, number: int, why: str) -> PtbankError:
    return PtbankError(f"{path}:{number}: the ledger's record is damaged: {why}. Every earlier "
                       "record is intact; fix or delete that line by hand (the ledger is "
                       "append-only: ptbank never rewrites it), then run again")

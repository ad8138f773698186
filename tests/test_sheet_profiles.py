"""Role profiles and the sheet ledger: the mix a profile asks for, exposure spread evenly,
no repeats for a candidate, honest time, and a ledger that survives damage."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ptbank.errors import ContentError, PtbankError
from ptbank.ledger import LedgerRecord, append_record, exposure, read_ledger
from ptbank.loader import load_bank
from ptbank.models import Kind, Level
from ptbank.sheet import Exposure, SheetRequest, select_questions

ROOT = Path(__file__).resolve().parents[1]
TOPICS = {"t1": 3, "t2": 2, "t3": 1}
MIX = {"beginner": 1, "intermediate": 3, "advanced": 2}
PROFILE = """\
role:
  name: {zh: 测试岗位, en: Test role}
  topics: {t1: 3, t2: 2, t3: 1, coding: 1}
  levels: {beginner: 1, intermediate: 3, advanced: 2}
  coding: {include: true, share: 0.4}
  buffer_minutes: 5
"""


def _question(qid: str, topic: str, level: str, minutes: int, kind: str = "concept") -> str:
    return (f"id: {qid}\ntopic: {topic}\nlevel: {level}\nkind: {kind}\nminutes: {minutes}\n"
            f"zh: {{title: 题 {qid}, question: 问题 {qid}, answer: 答案, rubric: [要点]}}\n"
            f"en: {{title: Q {qid}, question: Question {qid}, answer: Answer, rubric: [point]}}\n"
            "snippets:\n  - id: s\n    code: |\n      assert True\n"
            + ("  - id: hidden\n    show: hidden\n    code: |\n      assert 1\n"
               if kind == "coding" else ""))


@pytest.fixture(scope="module")
def content(tmp_path_factory) -> Path:
    """4 concept questions (5 min) per (topic, level) cell, 4 coding tasks (10 min)."""
    root = tmp_path_factory.mktemp("profiles") / "content"
    shutil_copy = (ROOT / "tests" / "fixtures" / "good" / "bank.yaml").read_text("utf-8")
    root.mkdir()
    (root / "bank.yaml").write_text(shutil_copy, encoding="utf-8")
    (root / "topics.yaml").write_text("".join(f"{t}: {{zh: 主题{t}, en: Topic {t}}}\n"
                                              for t in (*TOPICS, "coding")), encoding="utf-8")
    (root / "profiles.yaml").write_text(PROFILE, encoding="utf-8")
    for topic in TOPICS:
        (root / topic).mkdir()
        for level in MIX:
            for n in range(4):
                qid = f"{topic}-{level}-{n}"
                (root / topic / f"{qid}.yaml").write_text(_question(qid, topic, level, 5))
    (root / "coding").mkdir()
    for n in range(4):
        (root / "coding" / f"task-{n}.yaml").write_text(
            _question(f"task-{n}", "coding", "intermediate", 10, "coding"))
    return root


def _request(seed: int, **more) -> SheetRequest:
    return SheetRequest(level=None, seed=seed, minutes=60, profile="role", **more)


def test_weights_and_level_mix_hold_on_every_sheet_of_100_seeds_within_one_question(content):
    """The stated tolerance: on each sheet, each level's and each topic's count is within one
    question of its share of the sheet (a sheet of 10 cannot hold exactly 1/6 beginners)."""
    bank = load_bank(content)
    level_share = {lv: n / sum(MIX.values()) for lv, n in MIX.items()}
    topic_share = {t: w / sum(TOPICS.values()) for t, w in TOPICS.items()}
    seen_sheets = set()
    for seed in range(100):
        sheet = select_questions(bank, _request(seed))
        seen_sheets.add(tuple(q.id for q in sheet))
        levels = Counter(q.level.value for q in sheet)
        for level, share in level_share.items():
            assert abs(levels[level] - share * len(sheet)) <= 1, (seed, levels)
        concept = [q for q in sheet if q.kind is Kind.concept]
        topics = Counter(q.topic for q in concept)
        for topic, share in topic_share.items():
            assert abs(topics[topic] - share * len(concept)) <= 1, (seed, topics)
        assert sum(q.kind is Kind.coding for q in sheet) == 1, "one coding task a sheet"
        assert sum(q.minutes for q in sheet) <= 60 - 5, "questions plus buffer fit the budget"
    assert len(seen_sheets) > 50, "seeds vary the sheet"


def test_twenty_sheets_spread_exposure_evenly_within_each_cell(content, tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    for seed in range(20):
        result = _cli(content, tmp_path, "--profile", "role", "--minutes", "60", "--seed",
                      str(seed), "--candidate", f"c{seed}", "--ledger", str(ledger))
        assert result.returncode == 0, result.stderr
    given = exposure(read_ledger(ledger))
    bank = load_bank(content)
    cells: dict[tuple, list[int]] = {}
    for q in bank.questions:
        cells.setdefault((q.kind, q.level, q.topic), []).append(given[q.id])
    for cell, counts in cells.items():
        assert max(counts) - min(counts) <= 1, (cell, counts)
        assert min(counts) >= 1, f"every cell is drawn on over 20 sheets: {cell}"
    assert sum(given.values()) == 20 * 10
    shown = subprocess.run([sys.executable, "-m", "ptbank", "ledger", "--content", str(content),
                            "--ledger", str(ledger)], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": "200"}, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "exposure per question (20 sheets)" in shown.stdout
    role = next(line for line in shown.stdout.splitlines() if "│ role" in line)
    spread = f"{min(given.values())}–{max(given.values())}"  # weights make cells differ
    assert [cell.strip() for cell in role.split("│")[1:-1]] == ["role", "20", "20", "40", "40",
                                                               spread]


def test_a_second_sheet_for_the_same_candidate_repeats_nothing(content, tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    args = ("--profile", "role", "--minutes", "60", "--candidate", "Ada", "--ledger",
            str(ledger))
    assert _cli(content, tmp_path, *args, "--seed", "1").returncode == 0
    assert _cli(content, tmp_path, *args, "--seed", "1").returncode == 0
    first, second = read_ledger(ledger)
    assert len(first.questions) == len(second.questions) == 10
    assert not set(first.questions) & set(second.questions)
    # the printed command regenerates the first sheet exactly, and records nothing
    interviewer = next(tmp_path.glob(f"sheet-{first.sheet}-interviewer-en.md"))
    before = interviewer.read_bytes()
    interviewer.unlink()
    regenerate = first.command.split()[2:]
    assert "--ledger-upto" in regenerate
    assert _cli(content, tmp_path, *regenerate).returncode == 0
    assert interviewer.read_bytes() == before
    assert len(read_ledger(ledger)) == 2


def test_a_damaged_ledger_line_is_named_and_no_record_is_lost(content, tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    for seed in (1, 2):
        assert _cli(content, tmp_path, "--profile", "role", "--minutes", "60", "--seed",
                    str(seed), "--ledger", str(ledger)).returncode == 0
    good = ledger.read_bytes()
    for damage, line, why in ((b'{"sheet": "X", "date": 5', 3, "half-written"),
                              (b'{"sheet": "X"}\n', 3, "required"),
                              (b'not json\n', 3, "not a JSON record")):
        ledger.write_bytes(good + damage)
        result = _cli(content, tmp_path, "--profile", "role", "--minutes", "60", "--seed", "3",
                      "--ledger", str(ledger))
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert f"ledger.jsonl:{line}: the ledger's record is damaged" in result.stderr
        assert why in result.stderr
        assert ledger.read_bytes() == good + damage, "nothing rewritten, nothing appended"
        with pytest.raises(PtbankError):
            append_record(ledger, LedgerRecord(sheet="Y", date="2026-12-01", questions=["a"],
                                               command="c"))
        assert ledger.read_bytes().startswith(good)
    ledger.write_bytes(good)
    assert [r.sheet for r in read_ledger(ledger)] == [r.sheet for r in read_ledger(ledger)][:2]


def test_a_profile_the_bank_cannot_fill_says_what_is_missing(content, tmp_path):
    bank = load_bank(content)
    with pytest.raises(PtbankError, match=r"no coding task in its topics and levels fits 4 "
                                          r"minutes \(40% of 11\)"):
        select_questions(bank, SheetRequest(level=None, seed=1, minutes=16, profile="role"))
    seen = Exposure(given=frozenset(q.id for q in bank.questions if q.kind is Kind.concept))
    with pytest.raises(PtbankError, match="no concept questions in its topics"):
        select_questions(bank, _request(1, candidate="Ada"), seen)
    with pytest.raises(PtbankError, match="unknown profile 'rol'"):
        select_questions(bank, SheetRequest(level=None, seed=1, minutes=60, profile="rol"))


@pytest.mark.parametrize(("old", "new", "message"), [
    ("t3: 1, coding", "t4: 1, coding", "profiles.yaml:3: role.topics.t4: unknown topic 't4'"),
    ("beginner: 1, intermediate: 3, advanced: 2", "beginner: 0",
     "profiles.yaml:4: role.levels: at least one level needs a count above 0"),
    ("share: 0.4", "share: 2", "profiles.yaml:5: role.coding.share:"),
])
def test_profiles_are_validated_with_file_and_line(content, tmp_path, old, new, message):
    import shutil

    copy = tmp_path / "content"
    shutil.copytree(content, copy)
    (copy / "profiles.yaml").write_text(PROFILE.replace(old, new), encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        load_bank(copy)
    assert any(message in str(p) for p in caught.value.problems), caught.value.problems


def test_the_shipped_profiles_each_fill_an_hour_in_both_languages():
    bank = load_bank(ROOT / "content")
    assert len(bank.profiles) >= 5
    for name in bank.profiles:
        for seed in range(5):
            sheet = select_questions(bank, SheetRequest(level=None, seed=seed, minutes=60,
                                                        profile=name))
            assert 60 - 5 - 15 <= sum(q.minutes for q in sheet) <= 60 - 5, name
            assert sum(q.kind is Kind.coding for q in sheet) == 1
            assert {q.level for q in sheet} <= set(Level)


def _cli(content: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    return subprocess.run([sys.executable, "-m", "ptbank", "sheet", "--content", str(content),
                           "--draft", "--format", "md", "--lang", "en", "--out", str(out),
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_where_the_ledger_lives_does_not_change_the_sheet(content, tmp_path):
    """The selection is a function of the bank, the request, the seed and what the ledger
    says, not of the ledger file's path: a copied ledger gives the same sheet and ID."""
    here, there = tmp_path / "here" / "ledger.jsonl", tmp_path / "there" / "copy.jsonl"
    here.parent.mkdir()
    there.parent.mkdir()
    for seed in range(3):
        assert _cli(content, tmp_path, "--profile", "role", "--minutes", "60", "--seed",
                    str(seed), "--ledger", str(here)).returncode == 0
    there.write_bytes(here.read_bytes())
    for ledger in (here, there):
        assert _cli(content, tmp_path, "--profile", "role", "--minutes", "60", "--seed", "7",
                    "--candidate", "Ada", "--ledger", str(ledger)).returncode == 0
    first, second = read_ledger(here)[-1], read_ledger(there)[-1]
    assert first.questions == second.questions
    assert first.sheet == second.sheet
    assert str(there) in second.command, "the regenerate command still names its ledger"


def test_concurrent_sheets_for_one_candidate_repeat_nothing(content, tmp_path, monkeypatch):
    """Two `ptbank sheet` runs at once for one candidate: the ledger is read, the sheet drawn
    and its record appended under one lock, so the second draws after the first is recorded.
    Rendering is slowed down so that, unlocked, both would read the ledger before either
    recorded its sheet."""
    import threading
    import time

    from ptbank import pipeline
    from ptbank.cli import build_parser

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764460800")
    write = pipeline.write_artifacts

    def slow_write(*args, **kwargs):
        time.sleep(1)
        write(*args, **kwargs)

    monkeypatch.setattr(pipeline, "write_artifacts", slow_write)
    ledger = tmp_path / "ledger.jsonl"
    args = build_parser().parse_args(
        ["sheet", "--content", str(content), "--draft", "--format", "md", "--lang", "en",
         "--out", str(tmp_path), "--profile", "role", "--minutes", "60", "--seed", "1",
         "--candidate", "Ada", "--ledger", str(ledger)])
    failures = []

    def issue():
        try:
            pipeline.sheet_command(args)
        except Exception as exc:  # reported below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=issue) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures
    first, second = read_ledger(ledger)
    assert not set(first.questions) & set(second.questions)
    assert first.sheet != second.sheet


def test_one_loop_one_sheet_for_every_candidate_recorded_for_each(content, tmp_path):
    """Same seed and profile, different candidates: without --loop each gets their own sheet;
    with --loop every candidate of the loop gets the first one's questions and sheet ID."""
    ledger = tmp_path / "ledger.jsonl"
    common = ("--profile", "role", "--minutes", "60", "--seed", "4", "--ledger", str(ledger))
    for who in ("A", "B", "C"):
        result = _cli(content, tmp_path, *common, "--loop", "q4-infra", "--candidate", who)
        assert result.returncode == 0, result.stderr
    first, second, third = read_ledger(ledger)
    assert first.questions == second.questions == third.questions
    assert first.sheet == second.sheet == third.sheet
    assert [r.candidate for r in (first, second, third)] == ["A", "B", "C"]
    assert {r.loop for r in (first, second, third)} == {"q4-infra"}
    alone = _cli(content, tmp_path, *common, "--candidate", "D")
    assert alone.returncode == 0, alone.stderr
    assert read_ledger(ledger)[-1].questions != first.questions   # no loop: D's own draw
    sheet = (tmp_path / f"sheet-{first.sheet}-interviewer-en.md").read_text(encoding="utf-8")
    assert f"Interview loop q4-infra: every candidate of the loop gets the same sheet " \
           f"({first.sheet})" in sheet
    missing = _cli(content, tmp_path, *common, "--loop", "q4-infra")
    assert missing.returncode == 2 and "--candidate" in missing.stderr


def test_a_loop_candidate_who_had_a_question_gets_a_stated_substitute(content, tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    common = ("--profile", "role", "--minutes", "60", "--seed", "5", "--ledger", str(ledger))
    assert _cli(content, tmp_path, *common, "--loop", "L", "--candidate", "A").returncode == 0
    base = read_ledger(ledger)[0]
    bank = load_bank(content)
    had = next(bank.question(q) for q in base.questions
               if bank.question(q).kind is Kind.concept)
    append_record(ledger, LedgerRecord(sheet="EARLIER", date="2026-11-01", candidate="B",
                                       questions=[had.id], command="ptbank sheet ..."))
    result = _cli(content, tmp_path, *common, "--loop", "L", "--candidate", "B")
    assert result.returncode == 0, result.stderr
    b = read_ledger(ledger)[-1]
    assert had.id not in b.questions and len(b.questions) == len(base.questions)
    index = base.questions.index(had.id)
    by = bank.question(b.questions[index])                     # in the replaced one's place
    assert (by.kind, by.level, by.topic) == (had.kind, had.level, had.topic)
    assert by.minutes <= had.minutes
    assert [q for i, q in enumerate(b.questions) if i != index] == \
        [q for i, q in enumerate(base.questions) if i != index]
    assert b.sheet != base.sheet and b.loop == "L"
    sheet = (tmp_path / f"sheet-{b.sheet}-interviewer-en.md").read_text(encoding="utf-8")
    assert f"**Question {index + 1} replaces “{had.en.title}”, which this candidate had " \
           "before**" in sheet
    wrong = _cli(content, tmp_path, "--level", "beginner", "--minutes", "30", "--seed", "5",
                 "--ledger", str(ledger), "--loop", "L", "--candidate", "C")
    assert wrong.returncode == 2 and "give the same --profile or --level" in wrong.stderr


def test_stats_counts_the_coding_tasks_each_profile_can_draw_against_the_floor(
        content, tmp_path, capsys):
    """A task counts for a profile where a sheet for it could draw the task: in the role's
    topics, carrying one of its coding tags, none of its excluded ones."""
    from ptbank.cli import main

    root = tmp_path / "content"
    shutil.copytree(content, root)
    narrow = ("narrow:\n  name: {zh: 窄, en: Narrow}\n  topics: {t1: 1, coding: 1}\n"
              "  levels: {intermediate: 1, advanced: 1}\n"
              "  coding: {include: true, share: 0.5, tags: [wanted]}\n"
              "  exclude_tags: [banned]\n  buffer_minutes: 0\n")
    with (root / "profiles.yaml").open("a", encoding="utf-8") as file:
        file.write(narrow)

    def task(qid: str, topic: str, tags: str) -> None:
        text = _question(qid, topic, "advanced", 10, "coding")
        (root / topic / f"{qid}.yaml").write_text(
            text.replace("minutes:", f"tags: [{tags}]\nminutes:"), encoding="utf-8")

    for n in range(8):
        task(f"wanted-{n}", "coding", "wanted")
    task("wanted-banned", "coding", "wanted, banned")   # excluded by the narrow role
    task("wanted-t3", "t3", "wanted")                     # outside the narrow role's topics
    assert main(["stats", "--content", str(root)]) == 0
    out = capsys.readouterr().out
    rows = {cells[0].strip(): [c.strip() for c in cells[1:]]
            for cells in (line.strip("│").split("│") for line in out.splitlines()
                          if line.startswith("│")) if cells[0].strip() in ("role", "narrow")}
    # beginner, intermediate, advanced: the role draws any task of its topics (4 + 0 + 10)
    assert rows == {"role": ["0", "4 (short)", "10"],
                    "narrow": ["0", "0 (short)", "8"]}

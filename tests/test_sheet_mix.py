"""Sheets of the shipped profiles keep to the mix they print and to their role, over 100 seeds
each, on the real bank; a mix the bank cannot fill is said on the sheet."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.models import Kind, Level
from ptbank.sheet import Exposure, SheetRequest, draw_sheet

ROOT = Path(__file__).resolve().parents[1]
SEEDS = range(100)
TOPIC_TOLERANCE = 0.10
"""Over 100 sheets, each topic's share of the questions is within this of its weight's share
(absolute). Sheets hold 4–8 questions, and topics whose bank holds few questions of the
profile's levels cannot always take their seat."""


def largest_remainders(weights: dict, seats: int) -> dict:
    """Written out again here, independently of profile_draw.apportion."""
    total = sum(weights.values())
    base = {k: int(seats * w // total) for k, w in weights.items()}
    rest = sorted(weights, key=lambda k: -((seats * weights[k]) % total))
    for k in rest[:seats - sum(base.values())]:
        base[k] += 1
    return base


@pytest.fixture(scope="module")
def bank():
    return load_bank(ROOT / "content")


@pytest.fixture(scope="module")
def sheets(bank):
    """100 sheets of an hour per shipped profile."""
    return {name: [draw_sheet(bank, SheetRequest(level=None, seed=seed, minutes=60,
                                                 profile=name)) for seed in SEEDS]
            for name in bank.profiles}


def test_every_sheet_has_the_level_counts_of_its_profile_scaled_to_its_size(bank, sheets):
    for name, drawn in sheets.items():
        mix = {lv: n for lv, n in bank.profiles[name].levels.items() if n}
        for seed, draw in zip(SEEDS, drawn):
            got = Counter(q.level for q in draw.questions)
            assert draw.shortfalls == (), (name, seed, draw.shortfalls)
            wanted = largest_remainders(mix, len(draw.questions))
            coding = next(q.level for q in draw.questions if q.kind is Kind.coding)
            if wanted[coding] == 0:          # the task takes a seat of its own level
                wanted = dict(draw.level_counts)
            assert {lv: got[lv] for lv in mix} == wanted, (name, seed, got, wanted)
            assert sum(q.minutes for q in draw.questions) <= 60 - 5


def test_training_infra_prints_1_2_3_and_a_six_question_sheet_gets_exactly_that(bank, sheets):
    six = [d for d in sheets["training-infra"] if len(d.questions) == 6]
    assert six, "some hour-long training-infra sheets hold six questions"
    for draw in six:
        got = Counter(q.level for q in draw.questions)
        assert (got[Level.beginner], got[Level.intermediate], got[Level.advanced]) == (1, 2, 3)


def expected_seats(weights: dict, seats: int) -> dict:
    """largest_remainders when ties fall at random (the draw breaks them by the sheet's
    seed): topics tied for the last remainder seats share them equally."""
    total = sum(weights.values())
    base = {k: int(seats * w // total) for k, w in weights.items()}
    left = seats - sum(base.values())
    remainder = {k: (seats * w) % total for k, w in weights.items()}
    ranked = sorted(set(remainder.values()), reverse=True)
    for value in ranked:
        tied = [k for k in weights if remainder[k] == value]
        share = min(left, len(tied)) / len(tied)
        for k in tied:
            base[k] += share
        left -= min(left, len(tied))
    return base


def test_topic_shares_over_100_sheets_follow_the_weights_and_the_heaviest_leads(bank, sheets):
    """Each sheet's topic counts are its weights scaled to its size by largest remainders (a
    weight-4 topic of 14 takes 2 of a 5-question sheet: 0.4, not 4/14), ties broken by the
    seed, so the shares over 100 sheets are measured against those counts' expectation. A
    topic that holds only coding tasks gets its share through the coding task's own draw
    (test_the_coding_task_keeps_to_the_role_and_its_topic_to_the_weights), not these counts."""
    for name, drawn in sheets.items():
        weights = bank.profiles[name].topics
        questions = [q for d in drawn for q in d.questions]
        count = Counter(q.topic for q in questions)
        seats = Counter()
        for draw in drawn:
            seats.update(expected_seats(weights, len(draw.questions)))
        concept_topics = {q.topic for q in bank.questions if q.kind is Kind.concept}
        for topic in concept_topics & set(weights):
            share, meant = count[topic] / len(questions), seats[topic] / len(questions)
            assert abs(share - meant) <= TOPIC_TOLERANCE, (name, topic, share, meant)
        heaviest = [t for t in weights if weights[t] == max(weights.values())]  # ties: any
        assert max(count[t] for t in heaviest) == max(count.values()), (name, count)


def test_the_coding_task_keeps_to_the_role_and_its_topic_to_the_weights(bank, sheets):
    for name, drawn in sheets.items():
        profile = bank.profiles[name]
        tasks = [next(q for q in d.questions if q.kind is Kind.coding) for d in drawn]
        if profile.coding.tags:
            assert all(set(q.tags) & set(profile.coding.tags) for q in tasks), name
        topics = Counter(q.topic for q in tasks)
        assert len(topics) >= 3 and len({q.id for q in tasks}) >= 5, (name, topics)
        top = max(profile.topics[t] for t in topics)
        heaviest = [t for t in topics if profile.topics[t] == top]  # tied topics: any of them
        assert max(topics[t] for t in heaviest) >= 0.2 * len(tasks), (name, topics)
        banned = set(profile.exclude_tags)
        assert not any(banned & set(q.tags) for d in drawn for q in d.questions), name


def test_the_issues_misses_are_gone(bank, sheets):
    """training-infra had RoPE as its task; inference-deployment a distillation or DPO loss."""
    infra = {q.id for d in sheets["training-infra"] for q in d.questions}
    assert "rope" not in infra
    inference = {q.id for d in sheets["inference-deployment"] for q in d.questions}
    assert not {"dpo-loss", "knowledge-distillation-loss"} & inference
    llm = [sum(q.topic == "llm" for q in d.questions) for d in sheets["llm-research"]]
    assert sum(llm) / len(llm) >= 1.5, "an LLM research sheet has about two LLM questions"


def test_a_mix_the_bank_cannot_fill_is_drawn_as_near_as_it_can_and_said(tmp_path):
    content = tmp_path / "content"
    (content / "t1").mkdir(parents=True)
    (content / "bank.yaml").write_text(
        (ROOT / "tests" / "fixtures" / "good" / "bank.yaml").read_text("utf-8"), "utf-8")
    (content / "topics.yaml").write_text("t1: {zh: 主题一, en: Topic one}\n", "utf-8")
    (content / "profiles.yaml").write_text(
        "deep:\n  name: {zh: 深度, en: Deep}\n  topics: {t1: 1}\n"
        "  levels: {beginner: 1, advanced: 2}\n  coding: {include: false}\n"
        "  buffer_minutes: 5\n", "utf-8")
    for qid, level, minutes in (("b1", "beginner", 5), ("b2", "beginner", 5),
                                ("b3", "beginner", 5), ("a1", "advanced", 40)):
        (content / "t1" / f"{qid}.yaml").write_text(
            f"id: {qid}\ntopic: t1\nlevel: {level}\nminutes: {minutes}\n"
            f"zh: {{title: 题{qid}, question: 问题, answer: 答案, rubric: [要点]}}\n"
            f"en: {{title: Q {qid}, question: Question, answer: Answer, rubric: [point]}}\n"
            "snippets:\n  - id: s\n    code: |\n      assert True\n", "utf-8")
    bank = load_bank(content)
    draw = draw_sheet(bank, SheetRequest(level=None, seed=1, minutes=35, profile="deep"),
                      Exposure())
    assert [q.level.value for q in draw.questions] == ["beginner"] * 3
    short, = draw.shortfalls
    assert (short.level, short.wanted, short.got, short.shortest) == (Level.advanced, 2, 0, 40)
    from ptbank.cli import main

    out = tmp_path / "sheets"
    assert main(["sheet", "--content", str(content), "--profile", "deep", "--minutes", "35",
                 "--seed", "1", "--lang", "en", "--format", "md", "--draft", "--out",
                 str(out)]) == 0
    interviewer, = out.glob("sheet-*-interviewer-en.md")
    assert ("**Mix not met — Advanced: 0 of 2; the time left fits no question of that level "
            "that keeps the other counts (the shortest takes 40 min)**") in \
        interviewer.read_text(encoding="utf-8")

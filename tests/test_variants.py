"""Variants: parameters drawn per sheet, answers torch computes, verified and recorded like
any snippet; lint of placeholders, `ptbank stress`, sheets and grading against a variant."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ptbank.loader import load_bank
from ptbank.variants import VARIANTS, draw, variant_for

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "variants"
CONV = Path("content/modules/conv-output-shape.yaml")


def ptbank(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764547200", "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "content")
    return tmp_path


def _edit(project: Path, old: str, new: str, path: Path = CONV) -> None:
    file = project / path
    text = file.read_text("utf-8")
    assert old in text, old
    file.write_text(text.replace(old, new), encoding="utf-8")


def _conv_out(size: int, kernel: int, stride: int) -> int:
    """The answer, computed here by a fresh torch (not by the bank's solve)."""
    import torch

    conv = torch.nn.Conv2d(3, 8, kernel, stride=stride, padding=1)
    return conv(torch.zeros(1, 3, size, size)).shape[-1]


# --- drawing ------------------------------------------------------------------------------

def test_variants_are_drawn_from_the_question_id_and_vary():
    bank = load_bank(FIXTURE)
    q = bank.question("conv-output-shape")
    assert draw(q, 0) == {"size": 64, "kernel": 3, "stride": 2}
    drawn = [draw(q, i) for i in range(1, VARIANTS + 1)]
    assert drawn == [draw(q, i) for i in range(1, VARIANTS + 1)]  # the same every time
    assert len({json.dumps(d, sort_keys=True) for d in drawn}) > VARIANTS // 2
    assert all(32 <= d["size"] <= 224 and d["size"] % 16 == 0 for d in drawn)
    # two questions on one sheet get their variants independently
    picks = {(variant_for(seed, "a"), variant_for(seed, "b")) for seed in range(40)}
    assert len({a for a, _ in picks}) > 8 and any(a != b for a, b in picks)


def test_a_range_is_drawn_from_without_listing_it():
    """A range's values are computed as read: a trillion of them load and draw at once (as a
    list, they would not fit in memory), and a float range keeps its rounded steps."""
    from ptbank.models import Param

    wide = Param(default=7, range=(0, 10 ** 12))
    assert len(wide.values()) == 10 ** 12 + 1 and wide.values()[-1] == 10 ** 12
    assert 7 in wide.values() and 2.5 not in wide.values() and "7" not in wide.values()
    assert 0 <= random.Random(3).choice(wide.values()) <= 10 ** 12
    fine = Param(default=0.3, range=(0.1, 0.5), step=0.1)
    assert list(fine.values()) == [0.1, 0.2, 0.3, 0.4, 0.5] and 0.3 in fine.values()
    assert 0.35 not in fine.values() and float("nan") not in fine.values()
    with pytest.raises(ValueError, match="not one of the values"):
        Param(default=0.35, range=(0.1, 0.5), step=0.1)


# --- lint ---------------------------------------------------------------------------------

def test_lint_passes_the_fixture(project: Path):
    result = ptbank(project, "lint", "--content", "content")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("old, new, message", [
    ("= {{answers.out}}`，所以", "= {{answers.outt}}`，所以",
     r"conv-output-shape.yaml:\d+: zh.answer: \{\{answers.outt\}\} is not defined"),
    ("stride={{params.stride}}, padding=1)` 的", "stride=2, padding=1)` 的",
     r"zh.question: .*parameter|params.stride.*zh and en|parameter stride is not in the zh "
     r"question"),
    ("H, k, s, p = {{params.size}}", "H, k, s, p = {{answers.out}}",
     r"snippets.0.code: code can use \{\{params.x\}\} but not \{\{answers.x\}\}"),
    ('stride=params["stride"]', "stride=2", r"solve never reads params\['stride'\]"),
    ("    - States the formula and gets {{answers.out}}", "    - States the formula",
     r"en.rubric.0: zh and en use different placeholders here \(answers.out\)"),
    ("title: 卷积的输出尺寸", "title: 卷积的输出尺寸 {{params.size}}",
     r"zh.title: a title holds no placeholder"),
    ("{{answers.shape}}`。", "{{answers.shape:q}}`。", r"not a format spec"),
])
def test_lint_refuses_placeholders_that_do_not_fit(project: Path, old, new, message):
    _edit(project, old, new)
    result = ptbank(project, "lint", "--content", "content")
    assert result.returncode != 0
    assert re.search(message, result.stderr), result.stderr


def test_lint_refuses_an_answer_never_printed(project: Path):
    _edit(project, "  shape: {}\n", "  shape: {}\n  unused: {}\n")
    result = ptbank(project, "lint", "--content", "content")
    assert "answer unused is never printed" in result.stderr


def test_placeholders_need_params(project: Path):
    path = Path("content/coding/pad-to-multiple.yaml")
    text = (project / path).read_text("utf-8")
    head, _, rest = text.partition("zh:\n")
    (project / path).write_text(re.sub(r"params:.*?(?=zh:)", "", text, flags=re.S),
                                encoding="utf-8")
    result = ptbank(project, "lint", "--content", "content")
    assert result.returncode != 0
    assert "only a question with `params:` and `solve:`" in result.stderr


# --- verify and the record ----------------------------------------------------------------

def test_every_variant_is_verified_and_recorded_with_its_answers(project: Path):
    result = ptbank(project, "verify", "--record", "--content", "content", "--json", "r.json")
    assert result.returncode == 0, result.stderr
    report = json.loads((project / "r.json").read_text())
    results = {f"{r['question_id']}/{r['snippet_id']}": r for r in _results(report)}
    names = set(results)
    for index in range(VARIANTS + 1):
        assert f"conv-output-shape/solve@{index}" in names
        assert f"conv-output-shape/formula-matches-torch@{index}" in names
    record = [json.loads(line) for line in
              (project / "content/verification-record.jsonl").read_text().splitlines()]
    solved = {line["snippet"]: line["answers"] for line in record if "answers" in line}
    bank = load_bank(project / "content")
    q = bank.question("conv-output-shape")
    for index in range(VARIANTS + 1):
        p = draw(q, index)
        out = _conv_out(p["size"], p["kernel"], p["stride"])
        assert solved[f"conv-output-shape/solve@{index}"] == {"out": out,
                                                              "shape": [1, 8, out, out]}
        assert results[f"conv-output-shape/solve@{index}"]["answers"]["out"] == out
    # a fresh clone prints from the record: tamper with variant 0's answer and it prints that,
    # which it could not if it had run solve again ...
    path = project / "content/verification-record.jsonl"
    canonical = _conv_out(64, 3, 2)
    text = path.read_text().replace(f'{{"out": {canonical}, "shape": [1, 8, {canonical}, '
                                    f'{canonical}]}}', '{"out": 999, "shape": [1, 8, 999, 999]}')
    path.write_text(text)
    shutil.rmtree(project / "build" / "cache", ignore_errors=True)
    built = ptbank(project, "build", "--content", "content", "--format", "md", "--lang", "en",
                   "--answers", "--out", "out")
    assert built.returncode == 0, built.stderr
    assert "by the release record" in built.stderr and " 0 run here" in built.stderr
    markdown = (project / "out/ptbank-all-en-answers.md").read_text()
    assert "= 999`, so the shape is `[1, 8, 999, 999]`" in markdown
    assert "Sheets vary this question's numbers" in markdown
    # ... and CI's check catches a record whose answers a fresh run does not confirm
    check = ptbank(project, "verify", "--check-record", "--no-cache", "--content", "content")
    assert check.returncode != 0
    assert "conv-output-shape/solve@0" in check.stderr and "recorded answers differ" in check.stderr


def _results(report: dict) -> list[dict]:
    builds = report["builds"] if "builds" in report else [report]
    return [r for b in builds for r in b["results"]]


def test_a_variant_whose_solve_leaves_an_answer_out_or_exits_early_fails(project: Path):
    _edit(project, '"shape": list(y.shape)}', '"shpe": list(y.shape)}')
    result = ptbank(project, "verify", "--content", "content", "--no-cache",
                    "--only", "conv-output-shape/solve@3")
    assert result.returncode != 0
    assert "solve must set `answers` to a dict of ['out', 'shape']; it set ['out', 'shpe']" in \
        result.stdout + result.stderr
    _edit(project, '  answers = {"out": y.shape[-1], "shpe": list(y.shape)}',
          '  import os\n  os._exit(0)')
    result = ptbank(project, "verify", "--content", "content", "--no-cache",
                    "--only", "conv-output-shape/solve@3")
    assert result.returncode != 0 and "CRASHED conv-output-shape/solve@3" in result.stderr


# --- stress ---------------------------------------------------------------------------------

def test_stress_passes_a_sound_question(project: Path):
    result = ptbank(project, "stress", "conv-output-shape", "--n", "24", "--content", "content")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "conv-output-shape: ok — 24/24 variants solved" in result.stdout
    # stderr is a pipe here, as in CI: no bar, so the run says what it does before it does it
    assert result.stderr.startswith(
        "ptbank: solving 24 variant(s) of 1 question(s) (conv-output-shape)\n"), result.stderr


def test_stress_catches_a_degenerate_range_and_an_answer_out_of_bounds(project: Path):
    _edit(project, "size: {range: [32, 224], step: 16, default: 64}",
          "size: {range: [64, 64], default: 64}")
    _edit(project, "kernel: {choices: [3, 5, 7], default: 3}", "kernel: {choices: [3], default: 3}")
    _edit(project, "stride: {choices: [1, 2], default: 2}", "stride: {choices: [2], default: 2}")
    result = ptbank(project, "stress", "conv-output-shape", "--n", "6", "--content", "content")
    assert result.returncode == 1
    assert "answer out is 32 in every one of 6 variants: a degenerate range" in result.stdout
    # an answer below its min is a degenerate variant; an input smaller than the kernel fails
    _edit(project, "size: {range: [64, 64], default: 64}", "size: {range: [1, 12], default: 4}")
    _edit(project, "out: {min: 1}", "out: {min: 8}")
    result = ptbank(project, "stress", "conv-output-shape", "--n", "6", "--content", "content")
    assert result.returncode == 1
    assert re.search(r"variant \d+ \{'size': \d+, .*\}: failed: .*answer out = \d is below its "
                     r"min 8.*degenerate", result.stdout), result.stdout
    _edit(project, "kernel: {choices: [3], default: 3}", "kernel: {choices: [7], default: 7}")
    _edit(project, "size: {range: [1, 12], default: 4}", "size: {range: [1, 2], default: 2}")
    result = ptbank(project, "stress", "conv-output-shape", "--n", "3", "--content", "content")
    assert result.returncode == 1
    assert re.search(r"variant \d+ \{'size': [12], .*\}: error: \S", result.stdout), result.stdout


def test_stress_catches_a_value_the_question_does_not_tell(project: Path):
    # the stride still changes the answer, but the question no longer says which it is
    for old in ("kernel_size={{params.kernel}}, stride={{params.stride}}, padding=1)` 的",
                "kernel_size={{params.kernel}}, stride={{params.stride}}, padding=1)` give"):
        _edit(project, old, old.replace("stride={{params.stride}}", "stride=s"))
    result = ptbank(project, "stress", "conv-output-shape", "--n", "40", "--content", "content")
    assert result.returncode == 1
    assert "ask the same question but their answers differ" in result.stdout


# --- sheets ---------------------------------------------------------------------------------

def _sheet(project: Path, seed: int, lang: str, *extra: str) -> str:
    result = ptbank(project, "sheet", "--content", "content", "--level", "beginner",
                    "--count", "1", "--topics", "modules", "--seed", str(seed), "--format",
                    "md", "--lang", lang, "--out", "sheets", *extra)
    assert result.returncode == 0, result.stderr
    found = re.search(r"sheet (\S+) recorded", result.stderr)
    return found.group(1) if found else ""


def test_sheets_vary_the_numbers_and_their_keys_match_torch(project: Path):
    _edit(project, "out: {min: 1}", "out: {min: 1, rtol: 0.01}")  # the note names a tolerance
    assert ptbank(project, "verify", "--record", "--content", "content").returncode == 0
    seen = {}
    for upto, seed in enumerate((1, 2, 3)):
        ident = _sheet(project, seed, "en")
        _sheet(project, seed, "zh", "--ledger-upto", str(upto))  # the same sheet, in Chinese
        interviewer = (project / f"sheets/sheet-{ident}-interviewer-en.md").read_text()
        candidate = (project / f"sheets/sheet-{ident}-candidate-en.md").read_text()
        chinese = (project / f"sheets/sheet-{ident}-interviewer-zh.md").read_text()
        asked = re.search(r"The input is `\(1, 3, (\d+), \1\)`\. What shape does\n"
                          r"`Conv2d\(3, 8, kernel_size=(\d+), stride=(\d+), padding=1\)`",
                          interviewer)
        size, kernel, stride = map(int, asked.groups())
        assert asked.group(0) in candidate  # the candidate is asked the same variant
        assert (f"输入是 `(1, 3, {size}, {size})`，\n`Conv2d(3, 8, kernel_size={kernel}, "
                f"stride={stride}, padding=1)`") in chinese
        out = _conv_out(size, kernel, stride)
        assert f"= {out}`, so the shape is `[1, 8, {out}, {out}]`" in interviewer
        assert f"= {out}`，所以形状是 `[1, 8, {out}, {out}]`" in chinese
        ledger = [json.loads(line) for line in (project / "sheets/ledger.jsonl").open()]
        assert len(ledger) == upto + 1  # the Chinese print regenerated, it did not issue
        index = ledger[-1]["variants"]["conv-output-shape"]
        assert index == variant_for(ident, "conv-output-shape")
        assert f"variant {index} of {VARIANTS}" in interviewer
        assert f"第 {index} 组（共 {VARIANTS} 组）" in chinese
        for text in (interviewer, chinese):  # the note is printed in italics, no * left over
            note = next(line for line in text.splitlines()
                        if str(VARIANTS) in line and "1%" in line)
            html = MarkdownIt("commonmark").render(note)
            assert html.startswith("<p><em>") and "*" not in html, html
        assert "variant" not in candidate.lower()
        seen[seed] = (size, kernel, stride, out, ident, interviewer)
    assert len({v[:3] for v in seen.values()}) > 1  # different seeds, different numbers
    # --ledger-upto regenerates the first sheet exactly, variant included
    size, kernel, stride, out, ident, interviewer = seen[1]
    (project / f"sheets/sheet-{ident}-interviewer-en.md").unlink()
    _sheet(project, 1, "en", "--ledger-upto", "0")
    assert (project / f"sheets/sheet-{ident}-interviewer-en.md").read_text() == interviewer


# --- grading --------------------------------------------------------------------------------

ATTEMPT = """\
import torch.nn.functional as F


def pad_to_multiple(x):
    return F.pad(x, (0, -x.shape[-1] % 8))
"""


def test_a_parametrized_task_is_graded_against_the_variant_its_sheet_gave(project: Path):
    (project / "attempt.py").write_text(ATTEMPT)
    canonical = ptbank(project, "grade", "--content", "content", "pad-to-multiple", "attempt.py",
                       "--json", "g0.json")
    assert canonical.returncode == 0 and json.loads((project / "g0.json").read_text())["score"] == 1
    result = ptbank(project, "sheet", "--content", "content", "--level", "beginner",
                    "--minutes", "10", "--topics", "coding", "--seed", "5", "--format", "md", "--lang", "en",
                    "--out", "sheets", "--candidate", "A1")
    ident = re.search(r"sheet (\S+) recorded", result.stderr).group(1)
    ledger = [json.loads(line) for line in (project / "sheets/ledger.jsonl").open()]
    index = ledger[-1]["variants"]["pad-to-multiple"]
    multiple = draw(load_bank(project / "content").question("pad-to-multiple"), index)["multiple"]
    assert multiple != 8, "pick a seed whose variant asks for another multiple"
    sheet = (project / f"sheets/sheet-{ident}-candidate-en.md").read_text()
    assert f"a multiple of {multiple}" in sheet
    graded = ptbank(project, "grade", "--content", "content", "pad-to-multiple", "attempt.py",
                    "--sheet", ident, "--candidate", "A1", "--ledger", "sheets/ledger.jsonl",
                    "--json", "g.json")
    assert graded.returncode == 0, graded.stderr
    report = json.loads((project / "g.json").read_text())
    assert report["score"] == 0.5
    first = report["tests"][0]
    assert first["points"] == 0 and f"% {multiple} == 0" in first["message"] + first["output"]
    assert f"multiple of {multiple}" in first["name"]

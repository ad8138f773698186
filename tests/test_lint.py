"""Lint rules: what the schema cannot express, each finding located at file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ptbank.errors import Severity
from ptbank.lint import MAX_CODE_LINE, lint
from ptbank.loader import load_bank

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path("tests/fixtures")
GOOD = FIXTURES / "good"
Q = "tensors/type-promotion.yaml"

NOT_ALLOWED = ("not a character a question may hold (ptbank/charset.py allows the visible "
               "letters, digits, punctuation and symbols of the scripts the bank uses): "
               "invisible and look-alike characters make what prints differ from what it "
               "says or runs")
ASCII_ONLY = ("code outside comments and strings is ASCII only: a look-alike or invisible "
              "character makes it run otherwise than it reads")

SPACE = "put one space between Chinese and a Latin letter, a digit or inline code"
LINE_BREAK = "prints as nothing: break the line at a Chinese character or punctuation instead"
PUNCT = "full-width punctuation takes no space on either side"

LINT_BANKS = {
    "lint-parity": ["tensors/q.yaml:22: en.rubric: zh has 2 item(s), en has 1; keep them parallel"],
    "lint-no-claim": ["tensors/q.yaml:23: snippets: no snippet checks a claim: "
                      "add an assert, `raises` or `stdout`"],
    "lint-long-line": [f"tensors/q.yaml:28: snippets.0.code: line 3 of the code has 96 characters "
                       f"(max {MAX_CODE_LINE})"],
    "lint-warnings": ["tensors/q.yaml:23: warning: snippets: coding task without a hidden "
                      "snippet that tests the solution"],
    "lint-invisible": [
        f"tensors/q.yaml:12: zh.answer: U+3164 (HANGUL FILLER) at column 7: {NOT_ALLOWED}",
        f"tensors/q.yaml:14: zh.rubric.0: U+2028 (LINE SEPARATOR) at column 3: {NOT_ALLOWED}",
        f"tensors/q.yaml:20: en.answer: U+00A0 (NO-BREAK SPACE) at column 8: {NOT_ALLOWED}",
        f"tensors/q.yaml:22: en.rubric.0: U+2060 (WORD JOINER) at column 6: {NOT_ALLOWED}",
        f"tensors/q.yaml:28: snippets.0.code: U+3164 (HANGUL FILLER) at column 1: {ASCII_ONLY}",
        f"tensors/q.yaml:29: snippets.0.code: U+0445 (CYRILLIC SMALL LETTER HA) at column 1: "
        f"{ASCII_ONLY}",
        f"tensors/q.yaml:30: snippets.0.code: U+200D (ZERO WIDTH JOINER) at column 7: "
        f"{NOT_ALLOWED}",
        f"tensors/q.yaml:31: snippets.0.code: U+00AD (SOFT HYPHEN) at column 14: {NOT_ALLOWED}",
        f"tensors/q.yaml:32: snippets.0.code: U+180E (MONGOLIAN VOWEL SEPARATOR) at column 6: "
        f"{NOT_ALLOWED}",
        f"tensors/q.yaml:33: snippets.0.code: U+FE0F (VARIATION SELECTOR-16) at column 7: "
        f"{NOT_ALLOWED}",
        f"tensors/q.yaml:34: snippets.0.code: U+FFF9 (INTERLINEAR ANNOTATION ANCHOR) at column 6: "
        f"{NOT_ALLOWED}",
        f"tensors/q.yaml:35: snippets.0.code: U+0338 (COMBINING LONG SOLIDUS OVERLAY) at column 7: "
        f"{NOT_ALLOWED}",
        f"tensors/q.yaml:36: snippets.0.code: U+200A (HAIR SPACE) at column 7: {NOT_ALLOWED}",
        f"tensors/q.yaml:37: snippets.0.code: U+00A0 (NO-BREAK SPACE) at column 7: {NOT_ALLOWED}",
        f"tensors/q.yaml:38: snippets.0.code: U+E0041 (TAG LATIN CAPITAL LETTER A) at column 6: "
        f"{NOT_ALLOWED}",
    ],
    "lint-cjk-spacing": [
        f"tensors/q.yaml:9: zh.title: no space between 'rank' and '直' in '每个 rank直接算': "
        f"{SPACE}",
        "tensors/q.yaml:11: zh.question: no space between 'CommDebugMode' and '数' in "
        f"'面的代码用CommDebugMode数一下：': {SPACE}",
        "tensors/q.yaml:11: zh.question: no space between '用' and 'CommDebugMode' in "
        f"'下面的代码用CommDebugMode数一下：': {SPACE}",
        "tensors/q.yaml:13: zh.answer: a line break between 'scatter' and '搞' in "
        f"'duce-scatter搞定。每个`rank`' {LINE_BREAK}",
        f"tensors/q.yaml:14: zh.answer: a space between '片' and '。' in 'SDP做分片 。': {PUNCT}",
        "tensors/q.yaml:14: zh.answer: no space between 'FSDP' and '做' in "
        f"'共8 个，FSDP做分片 。': {SPACE}",
        "tensors/q.yaml:14: zh.answer: no space between '`rank`' and '返' in "
        f"'搞定。每个`rank`返回共8 个': {SPACE}",
        "tensors/q.yaml:14: zh.answer: no space between '个' and '`rank`' in "
        f"'r搞定。每个`rank`返回共8': {SPACE}",
        "tensors/q.yaml:14: zh.answer: no space between '共' and '8' in "
        f"'每个`rank`返回共8 个，FS': {SPACE}",
        f"tensors/q.yaml:22: zh.answer: a space between 'docs' and '。' in '.org/docs 。': {PUNCT}",
        "tensors/q.yaml:25: zh.rubric.1: no space between '到' and 'float64' in "
        f"'不会提升到float64': {SPACE}",
        "tensors/q.yaml:26: zh.follow_ups.0: no space between '是' and 'float64' in "
        f"'为什么不是float64？': {SPACE}",
        f"tensors/q.yaml:27: zh.hints.0: no space between '看' and 'dtype' in '看dtype': {SPACE}",
        "tensors/q.yaml:28: zh.red_flags.0: a space between 'int64' and '，' in "
        f"'说成 int64 ，不对': {PUNCT}",
        f"tensors/q.yaml:30: zh.anchors.one: no space between '错' and 'dtype' in '答错dtype': "
        f"{SPACE}",
    ],
}
"""Each lint bank loads cleanly and has exactly these findings (paths relative to the bank)."""


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def findings(content: Path) -> list[str]:
    return [str(p) for p in lint(load_bank(content))]


def test_good_bank_has_no_findings():
    assert findings(GOOD) == []


@pytest.mark.parametrize("name", sorted(LINT_BANKS))
def test_lint_bank_finding_is_located(name):
    assert findings(FIXTURES / name) == [f"{FIXTURES}/{name}/{line}" for line in LINT_BANKS[name]]


def test_every_lint_fixture_bank_is_tested():
    assert {p.name for p in FIXTURES.glob("lint-*")} == set(LINT_BANKS)


def test_warnings_and_errors_are_told_apart():
    [warning] = lint(load_bank(FIXTURES / "lint-warnings"))
    [error] = lint(load_bank(FIXTURES / "lint-parity"))
    assert (warning.severity, error.severity) == (Severity.warning, Severity.error)


# --- one rule at a time, on an edited copy of a good question ------------------------------------

def _findings_after(tmp_path: Path, *edits: tuple[str, str]) -> list[str]:
    content = tmp_path / "bank"
    shutil.copytree(GOOD, content)
    path = content / Q
    text = path.read_text("utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return [p.replace(f"{content}/", "") for p in findings(content)]


EN_ANSWER = "    floating-point dtype.\n"
ZH_ANSWER = "    结果是 `torch.float32`：Python 浮点标量把整数张量提升为默认浮点类型。\n"
ZH_RUBRIC = "    - 结果为 float32（默认浮点类型）"
CODE = "      assert x.dtype == torch.float32\n"
EN_RUBRIC = "  rubric:\n    - the result"
EN_FOLLOW_UP = (EN_RUBRIC, "  follow_ups: [Why not float64?]\n" + EN_RUBRIC)

RULE_CASES = {
    "follow-ups not parallel": (
        [EN_FOLLOW_UP],
        [f"{Q}:24: en.follow_ups: zh has 0 item(s), en has 1; keep them parallel"]),
    "indented code blocks count for parity": (
        [(ZH_ANSWER, ZH_ANSWER + "    - 例如：\n      ```python\n      x + 0.5\n      ```\n")],
        [f"{Q}:25: en.answer: zh has 1 code block(s), en has 0"]),
    "no Chinese in zh": (
        [("  title: 整数张量加上浮点数会得到什么类型？", "  title: Integer plus float"),
         ("    `torch.tensor([1, 2]) + 0.5` 的结果是什么 dtype？",
          "    `torch.tensor([1, 2]) + 0.5`?")],
        [f"{Q}:9: warning: zh.title: no Chinese text in the zh title (a cross-reference to "
         "this question would print its page in English)"]),
    "Chinese in en": (
        [(EN_ANSWER, EN_ANSWER + "    （默认类型）\n")],
        [f"{Q}:21: warning: en.answer: Chinese characters in the en section"]),
    "TODO left in a follow-up": (
        [("  rubric:\n    - 结果为", "  follow_ups: [TODO 追问]\n  rubric:\n    - 结果为"),
         EN_FOLLOW_UP],
        [f"{Q}:14: zh.follow_ups.0: still holds a TODO placeholder"]),
    "match without raises": (
        [(CODE, CODE + '    match: "float"\n')],
        [f"{Q}:34: snippets.0.match: `match` needs `raises`"]),
    "long line in a Markdown code block": (
        [(EN_ANSWER, EN_ANSWER + "\n    ```python\n    y = " + "1 + " * 24 + "1\n    ```\n"),
         (ZH_ANSWER, ZH_ANSWER + "\n    ```python\n    y = 1\n    ```\n")],
        [f"{Q}:30: warning: en.answer: a code line in the text has 101 characters (max 95)"]),
    "aged API printed": (
        [(CODE, CODE + "      assert torch.cuda.amp.autocast\n")],
        [f"{Q}:29: warning: snippets.0.code: torch.cuda.amp.autocast is deprecated; "
         "print torch.autocast(device_type=...) instead"]),
    "bold that would print literally": (
        [(EN_ANSWER, EN_ANSWER + "    **unbalanced bold\n")],
        [f"{Q}:21: en.answer: `**` would print literally near '**unbalanced bold': "
         "balance the bold, or put code in backticks"]),
    "CJK bold the renderer repairs": (
        [(ZH_ANSWER, ZH_ANSWER + "    **注意：**后面\n")],
        []),
    "reference to a question that is not in the bank": (
        [(EN_ANSWER, EN_ANSWER + "    See `no-such-question`; see `linear-backward` too.\n")],
        [f"{Q}:24: en.answer: refers the reader to `linear-backward` as code: write "
         "{ref}`linear-backward`, which prints the question's number and title",
         f"{Q}:24: en.answer: refers the reader to `no-such-question`, which is not a "
         "question of this bank"]),
    "Trojan Source: a right-to-left override in printed code": (
        [(CODE, '      ok = "\u202e" == 1 # \u2066" == ""\n' + CODE)],
        [f"{Q}:33: snippets.0.code: U+202E (RIGHT-TO-LEFT OVERRIDE) at column 7: "
         f"{NOT_ALLOWED}"]),
    "a control character written as a YAML escape": (
        [("  title: What dtype does an integer tensor plus a float give?",
          '  title: "SOH[\\x01] and NUL[\\0]"')],
        [f"{Q}:18: en.title: U+0001 (a control character) at column 5: {NOT_ALLOWED}"]),
    "a zero-width space in a rubric point": (
        [("    - the result is float32", "    - the result is float\u200b32")],
        [f"{Q}:25: en.rubric.0: U+200B (ZERO WIDTH SPACE) at column 20: {NOT_ALLOWED}"]),
    "a line separator ends a comment for the eye, not for Python": (
        [(CODE, "      # the check below\u2028      x = 0.5\n" + CODE)],
        [f"{Q}:33: snippets.0.code: U+2028 (LINE SEPARATOR) at column 18: {NOT_ALLOWED}"]),
    "a Hangul filler as a name in a Markdown code block": (
        [(EN_ANSWER, EN_ANSWER + "\n    ```python\n    \u3164 = 1\n    ```\n"),
         (ZH_ANSWER, ZH_ANSWER + "\n    ```python\n    y = 1\n    ```\n")],
        [f"{Q}:30: en.answer: U+3164 (HANGUL FILLER) at column 1: {NOT_ALLOWED}"]),
    "a carriage return hides what precedes it in a terminal": (
        [(CODE, CODE + '    stdout: "ok\\rfine"\n')],
        [f"{Q}:34: snippets.0.stdout: U+000D (a control character) at column 3: "
         f"{NOT_ALLOWED}"]),
    "Chinese, Greek and mathematics in comments, strings and prose pass": (
        [(CODE, '      # σ 的梯度 ∇L = ‖x‖² → 0 (≈ 1e-3 × β), 见下\n'
                '      label = "结果：≥ 0，μ ± σ"\n' + CODE),
         (EN_ANSWER, EN_ANSWER + "    The estimate x̂ has error ≤ 1e-3 — fine.\n")],
        []),
    "an image, which would make printing read a file": (
        [(EN_ANSWER, EN_ANSWER + "    ![plot](/etc/hostname) and ![remote](http://example.com/x.png)\n")],
        [f"{Q}:24: en.answer: an image (/etc/hostname): printing never reads files or the "
         "network, so describe it in words or draw it as a table or code",
         f"{Q}:24: en.answer: an image (http://example.com/x.png): printing never reads files "
         "or the network, so describe it in words or draw it as a table or code"]),
    "aged API in a hidden check": (
        [(CODE, CODE + "      assert torch.cuda.amp.autocast\n    show: hidden\n")],
        []),
    "zh: Chinese then a Latin word with no space": (
        [(ZH_RUBRIC, "    - 结果为float32（默认浮点类型）")],
        [f"{Q}:15: zh.rubric.0: no space between '为' and 'float32' in '结果为float32（默认浮点': "
         f"{SPACE}"]),
    "zh: a Latin word then Chinese with no space": (
        [(ZH_ANSWER, ZH_ANSWER.replace("Python 浮点", "Python浮点"))],
        [f"{Q}:13: zh.answer: no space between 'Python' and '浮' in "
         f"'果是 `torch.float32`：Python浮点标量把整': {SPACE}"]),
    "zh: digits against Chinese, both sides": (
        [(ZH_ANSWER, ZH_ANSWER + "    共2个元素。\n")],
        [f"{Q}:14: zh.answer: no space between '2' and '个' in '点类型。共2个元素。': {SPACE}",
         f"{Q}:14: zh.answer: no space between '共' and '2' in '浮点类型。共2个元素。': {SPACE}"]),
    "zh: inline code against Chinese": (
        [(ZH_ANSWER, ZH_ANSWER.replace("结果是 `", "结果是`"))],
        [f"{Q}:13: zh.answer: no space between '是' and '`torch.float32`' in "
         f"'结果是`torch.float32`：Pyth': {SPACE}"]),
    "zh: bold markup is seen through": (
        [(ZH_RUBRIC, "    - 结果为**float32**（默认浮点类型）")],
        [f"{Q}:15: zh.rubric.0: no space between '为' and 'float32' in '结果为float32（默认浮点': "
         f"{SPACE}"]),
    "zh: a line break between Chinese and Latin prints as nothing": (
        [(ZH_ANSWER, "    结果是 `torch.float32`：Python 浮点标量把整数张量提升为\n"
                     "    float32，默认浮点类型。\n")],
        [f"{Q}:13: zh.answer: a line break between '为' and 'float32' in "
         f"'数张量提升为float32，默认浮点' {LINE_BREAK}"]),
    "zh: the line of a finding after a code span that runs over a line break": (
        [(ZH_ANSWER, "    结果是 `torch.tensor([1,\n    2]) + 0.5` 的类型，即\n    float32。\n")],
        [f"{Q}:14: zh.answer: a line break between '即' and 'float32' in "
         f"'的类型，即float32。' {LINE_BREAK}"]),
    "zh: a space beside full-width punctuation": (
        [(ZH_RUBRIC, "    - 结果为 float32 （默认浮点类型）")],
        [f"{Q}:15: zh.rubric.0: a space between 'float32' and '（' in "
         f"'结果为 float32 （默认浮点类': {PUNCT}"]),
    "zh: spaced text, units, run-in headings and safe line breaks pass": (
        [(ZH_ANSWER, ZH_ANSWER + "    **结论。** 有 15% 的提升，233° 的高温，见 https://pytorch.org/docs。\n"
                     "    每个 rank 直\n    接返回，\n    `x` 与 **FSDP** 也一样：rank\n"
                     "    world 之间是空格。\n")],
        []),
    "zh: code spans, code blocks, snippets and en text are not checked": (
        [(ZH_ANSWER, ZH_ANSWER + "    `中文rank` 不算。\n\n"
                     "    ```python\n    x = 1  # 中文rank\n    ```\n\n"
                     "        缩进代码块里的中文rank\n"),
         (EN_ANSWER, EN_ANSWER + "\n    ```python\n    x = 1\n    ```\n"),
         (CODE, '      # 注释里的中文rank\n      s = "字符串rank"\n' + CODE),
         ("    - the result is float32", "    - the result (中文rank) is float32")],
        []),
}


@pytest.mark.parametrize("case", RULE_CASES)
def test_rule(tmp_path, case):
    edits, expected = RULE_CASES[case]
    assert _findings_after(tmp_path, *edits) == expected


def test_code_line_of_exactly_the_maximum_passes(tmp_path):
    line = "      y = '" + "x" * (MAX_CODE_LINE - 6) + "'\n"
    assert len(line.strip("\n")) - 6 == MAX_CODE_LINE
    assert _findings_after(tmp_path, (CODE, CODE + line)) == []


# --- a coding task's hidden checks are numbered and described in both languages ---------------

CODING = FIXTURES / "wrong-solutions" / "content"
EN_CHECKS = "  checks: [positives are kept, -1 becomes 0]"


def _coding_findings(tmp_path: Path, old: str, new: str) -> list[str]:
    content = tmp_path / "bank"
    shutil.copytree(CODING, content)
    path = content / "coding" / "relu-task.yaml"
    text = path.read_text("utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return [p.replace(f"{content}/", "") for p in findings(content)]


def test_the_coding_fixture_is_clean():
    assert findings(CODING) == []


@pytest.mark.parametrize(("old", "new", "expected"), [
    (EN_CHECKS, "  checks: [positives are kept]",
     ["coding/relu-task.yaml:17: en.checks: 1 check(s) described, the hidden test has 2: "
      "describe each `# N.` check once",
      "coding/relu-task.yaml:17: en.checks: zh has 2 item(s), en has 1; keep them parallel"]),
    ("      # 2. -1 becomes 0", "      # 3. -1 becomes 0",
     ["coding/relu-task.yaml:21: snippets.0.code: number the checks after `# --- checks ---` "
      "as `# 1. ...`, `# 2. ...` in order (found [1, 3])"]),
    ("      # --- checks ---\n", "",
     ["coding/relu-task.yaml:11: zh.checks: `checks` describe a hidden test, but no hidden "
      "snippet has a `# --- checks ---` line"]),
])
def test_checks_are_numbered_and_described(tmp_path, old, new, expected):
    assert _coding_findings(tmp_path, old, new) == expected


def test_spacing_is_checked_in_the_described_checks(tmp_path):
    assert _coding_findings(tmp_path, "  checks: [正数保持不变, -1 变为 0]",
                            "  checks: [正数保持不变, -1变为 0]") == [
        "coding/relu-task.yaml:11: zh.checks.1: no space between '1' and '变' in '-1变为 0': "
        f"{SPACE}"]


TEX = "write the formula in plain text, e.g. p_(k+1), α^(k+1)"


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("  answer: Use `x.clamp(min=0)`.",
     "  answer: Use `x.clamp(min=0)`, i.e. `y_{i} = max(x_i, 0)`.",
     [f"coding/relu-task.yaml:15: en.answer: TeX '_{{i}}' prints as typed: {TEX}"]),
    ("  rubric: [负数变为 0]", "  rubric: ['每轮 (1 − α^{k+1}) / (1 − α) 个']",
     [f"coding/relu-task.yaml:10: zh.rubric.0: TeX '^{{k+1}}' prints as typed: {TEX}"]),
    ("  rubric: [negatives become 0]", "  rubric: ['scales by \\frac{1}{\\sqrt{d}}']",
     [f"coding/relu-task.yaml:16: en.rubric.0: TeX '\\\\frac' prints as typed: {TEX}"]),
    ("  rubric: [negatives become 0]", "  rubric: ['p_(k+1) and α^(k+1), in plain text']", []),
])
def test_prose_holds_no_tex(tmp_path, old, new, expected):
    """Nothing typesets TeX in any format: `p_{k+1}` would print with its braces."""
    assert _coding_findings(tmp_path, old, new) == expected

"""Grades on the terminal: one submission check by check, or many as a summary table."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .results import OUTCOME_WORDS, Grade, Outcome

_STYLE = {Outcome.passed: "green", Outcome.failed: "red", Outcome.not_run: "dim"}
_WORDS = {
    "en": {"check": "check", "points": "points", "result": "result", "score": "score",
           "not_gradable": "not gradable", "printed": "what it printed",
           "submission": "submission", "failed": "failed checks"},
    "zh": {"check": "检查项", "points": "分值", "result": "结果", "score": "得分",
           "not_gradable": "无法评分", "printed": "程序输出", "submission": "提交",
           "failed": "未通过的检查"},
}


def print_grade(grade: Grade, console, lang: str = "en") -> None:
    """Every check with its points and outcome, then what each failure said."""
    words = _WORDS[lang]
    if not grade.gradable:
        console.print(f"[bold]{escape(grade.task)}[/] · {escape(grade.submission)}: "
                      f"[red]{words['not_gradable']}[/]: {escape(grade.message)}")
        return
    table = Table(title=f"{grade.task} · {grade.submission}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column(words["check"], ratio=1, overflow="fold")
    table.add_column(words["points"], justify="right")
    table.add_column(words["result"])
    for check in grade.checks:
        style = _STYLE.get(check.outcome, "yellow")
        table.add_row(str(check.number), escape(check.description.get(lang, "")),
                      f"{_number(check.points)}/{_number(check.max_points)}",
                      f"[{style}]{OUTCOME_WORDS[check.outcome][lang]}[/]")
    console.print(table)
    for check in grade.checks:
        if check.message:
            console.print(f"[bold]{words['check']} {check.number}[/] "
                          f"({OUTCOME_WORDS[check.outcome][lang]}):")
            console.print(escape(_indent(check.message)), highlight=False)
    if grade.message and not any(c.message == grade.message for c in grade.checks):
        console.print(escape(grade.message), highlight=False)
    if grade.output.strip():
        console.print(f"[bold]{words['printed']}[/]:")
        console.print(escape(_indent(grade.output.rstrip()[:2000])), highlight=False)
    console.print(f"[bold]{words['score']}: {_number(grade.points)}/"
                  f"{_number(grade.max_points)} ({grade.score:.0%})[/]"
                  f"  · torch {grade.torch} · {grade.seconds:.1f} s")


def print_summary(grades: list[Grade], console, lang: str = "en") -> None:
    """One row per submission: score, points, the checks it failed (or why it was not graded)."""
    words = _WORDS[lang]
    table = Table(title=f"{grades[0].task}: {len(grades)} {words['submission']}(s)",
                  title_justify="left")
    for column in (words["submission"], words["score"], words["points"], words["failed"]):
        table.add_column(column)
    for grade in grades:
        if not grade.gradable:
            table.add_row(escape(grade.submission), "—", "—",
                          f"[red]{words['not_gradable']}[/]: "
                          f"{escape(grade.message.splitlines()[0])}")
            continue
        failed = ", ".join(f"{c.number} ({OUTCOME_WORDS[c.outcome][lang]})"
                           for c in grade.checks if c.outcome is not Outcome.passed)
        table.add_row(escape(grade.submission), f"{grade.score:.0%}",
                      f"{_number(grade.points)}/{_number(grade.max_points)}",
                      escape(failed) or "—")
    console.print(table)


def _number(value: float) -> str:
    return f"{value:g}"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())

"""What changed between two torch builds: the snippets whose verdict or warnings differ.

A snippet's outcome under one build is read as lines: its verdict, then (for a problem) the
first line of why, then every warning it raised. Library line numbers and memory addresses
are left out, since they change with every release without meaning anything; for a skip only
the missing requirement counts, not how this machine found out.

A difference in warnings alone is *explained* when bank.yaml's `explained_drift` names every
warning line that differs (a release that reclassified a library's own warning, say) and says
why; a changed verdict never is.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from ..models import ExplainedDrift
from .results import SnippetResult, Status, VerifyReport, skip_tag

_LINE_NUMBER = re.compile(r"(\.py):\d+")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


@dataclass(frozen=True)
class Side:
    """One build's view of a drifting snippet: its verdict and its first line that differs."""

    status: str
    line: str


@dataclass(frozen=True)
class Drift:
    name: str
    where: str
    base: Side
    other: Side
    explained: str | None = None
    """Why the bank accepts this difference (from `explained_drift`), or None."""


def compare(base: VerifyReport, other: VerifyReport,
            explanations: list[ExplainedDrift] = ()) -> list[Drift]:
    """Every snippet of `base` whose outcome under `other` reads differently, in bank order."""
    theirs = {r.name: r for r in other.results}
    drifts = []
    for mine in base.results:
        a, b = outcome_lines(mine), outcome_lines(theirs.get(mine.name))
        if a == b:
            continue
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        drifts.append(Drift(mine.name, mine.where,
                            Side(a[0], a[at] if at < len(a) else "(nothing more)"),
                            Side(b[0], b[at] if at < len(b) else "(nothing more)"),
                            _explanation(a, b, explanations)))
    return drifts


def _explanation(a: list[str], b: list[str], explanations) -> str | None:
    """The reasons that cover every differing warning line; None if the verdict differs or a
    differing line is not covered."""
    if a[0] != b[0]:
        return None
    whys = []
    for line in set(a[1:]) ^ set(b[1:]):
        known = next((e for e in explanations if re.search(e.warning, line)), None)
        if known is None:
            return None
        whys.append(known.why)
    return " ".join(dict.fromkeys(whys))


def unexplained(drifts: list[Drift]) -> list[Drift]:
    return [d for d in drifts if d.explained is None]


def outcome_lines(result: SnippetResult | None) -> list[str]:
    """The result as the lines that are compared (see the module docstring)."""
    if result is None:
        return ["not run"]
    lines = [result.status.value]
    if result.status is Status.skipped:
        lines.append(f"requires {skip_tag(result.reason)}")
    elif result.status.is_problem and result.reason:
        lines.append(_normal(result.reason.splitlines()[0]))
    lines += sorted(_normal(w) for w in result.warnings)
    return lines


def _normal(line: str) -> str:
    return _ADDRESS.sub("0x…", _LINE_NUMBER.sub(r"\1", line))


def print_drift(reports: list[VerifyReport], drifts: list[Drift], console) -> None:
    from rich.table import Table
    from rich.text import Text

    base, other = reports
    open_ones = unexplained(drifts)
    if open_ones:
        table = Table(show_lines=True)
        table.add_column("snippet", overflow="fold", ratio=2)
        table.add_column(f"torch {base.torch_version}", overflow="fold", ratio=3)
        table.add_column(f"torch {other.torch_version}", overflow="fold", ratio=3)
        for drift in open_ones:
            table.add_row(Text(f"{drift.name}\n{drift.where}"),
                          Text(f"{drift.base.status}\n{drift.base.line}"),
                          Text(f"{drift.other.status}\n{drift.other.line}"))
        console.print(table)
    explained: dict[str, list[str]] = {}
    for drift in drifts:
        if drift.explained is not None:
            explained.setdefault(drift.explained, []).append(drift.name)
    for why, names in explained.items():
        console.print(Text(f"explained ({len(names)}): {why}\n  " + "\n  ".join(names),
                           style="dim"))
    console.print(Text(summary_line(reports, drifts), style="bold red" if open_ones else "bold"))


def summary_line(reports: list[VerifyReport], drifts: list[Drift]) -> str:
    base, other = reports
    explained = len(drifts) - len(unexplained(drifts))
    return (f"ptbank drift: {len(drifts)} of {len(base.results)} snippets differ between "
            f"torch {base.torch_version} and torch {other.torch_version}"
            + (f" ({explained} explained in bank.yaml)" if explained else ""))


def to_json(reports: list[VerifyReport], drifts: list[Drift]) -> str:
    base, other = reports
    data = {"base": {"torch_version": base.torch_version, "python_version": base.python_version},
            "other": {"torch_version": other.torch_version,
                      "python_version": other.python_version},
            "snippets": len(base.results),
            "drift": [asdict(d) for d in drifts]}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

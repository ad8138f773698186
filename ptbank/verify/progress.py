"""Progress on stderr while verifying: a rich bar on a terminal, else one line per problem."""

from __future__ import annotations

import sys
from typing import Protocol

from .results import SnippetResult


class ProgressView(Protocol):
    def advance(self, result: SnippetResult) -> None: ...

    def close(self) -> None: ...


class _Silent:
    def advance(self, result: SnippetResult) -> None:
        pass

    def close(self) -> None:
        pass


class _Lines:
    """For logs and CI: a line per snippet that did not pass, as soon as it is known."""

    def advance(self, result: SnippetResult) -> None:
        if result.status.is_problem:
            first = result.reason.splitlines()[0] if result.reason else ""
            print(f"{result.status.value.upper()} {result.name} ({result.where}): {first}",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class _Bar:
    """A rich progress bar; problems are printed above it as they come."""

    def __init__(self, total: int, done: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
        from rich.progress import TimeElapsedColumn

        self.progress = Progress(TextColumn("verifying"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.description}"),
                                 console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task("starting (import torch)", total=total,
                                           completed=done)
        self.progress.start()

    def advance(self, result: SnippetResult) -> None:
        if result.status.is_problem:
            from rich.markup import escape

            name, where = escape(result.name), escape(result.where)
            self.progress.console.print(f"[red]{result.status.value}[/red] {name} ({where})",
                                        highlight=False)
        self.progress.update(self.task, advance=1, description=result.name)

    def close(self) -> None:
        self.progress.stop()


def make_progress(enabled: bool, total: int, done: int) -> ProgressView:
    if not enabled or done == total:
        return _Silent()
    return _Bar(total, done) if sys.stderr.isatty() else _Lines()

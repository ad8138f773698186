"""`ptbank stress`: solve many variants of parametrized questions before they ship.

R/exams' `stresstest_exercise`: each variant's `solve` runs as a snippet of its own, on the
verifier's runner and sandbox (variants 1..n: the first 16 are the ones `verify` records), and
the answers are then read together. A question fails on
- a variant that does not solve (an exception, an answer left out, a non-finite answer, or
  one outside the answer's min/max: the checks `solve_snippet` appends);
- an answer that is the same for every variant: the ranges do not vary it (degenerate);
- two variants whose question reads the same in both languages but whose answers differ: a
  value that changes the answer is not told to the candidate.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

from .errors import EXIT_FAILED, PtbankError
from .models import Bank, Question
from .variants import Values, agree, draw, fill_text, solve_index, solve_snippet


@dataclass
class Stressed:
    """What stressing one question found."""

    question: Question
    answers: dict[int, Values] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def spread(self) -> list[str]:
        """Each answer's range over the solved variants, as a line."""
        lines = []
        for name in self.question.answers:
            values = [a[name] for a in self.answers.values()]
            distinct = {repr(v) for v in values}
            numbers = [v for v in values if isinstance(v, (int, float))]
            span = f"{min(numbers):g} … {max(numbers):g}, " if numbers else ""
            lines.append(f"{name}: {span}{len(distinct)} distinct")
        return lines


def stress_questions(bank: Bank, questions: list[Question], n: int, *, interpreter=None,
                     jobs: int | None = None, sandbox: bool = True,
                     progress: bool = False) -> list[Stressed]:
    """Solve variants 1..n of each question in one verifier run; read them together."""
    from .verify import verify_bank

    solves = {q.id: q.model_copy(update={
        "params": {}, "answers": {}, "solve": None,
        "snippets": [solve_snippet(q, i) for i in range(1, n + 1)]}) for q in questions}
    run_bank = bank.model_copy(update={"questions": tuple(solves.values())})
    report = verify_bank(run_bank, jobs=jobs, use_cache=False, progress=progress,
                         interpreter=interpreter, sandbox=sandbox, retry=False)
    found = {q.id: Stressed(q) for q in questions}
    for result in report.results:
        stressed = found[result.question_id]
        index = solve_index(result.snippet_id)
        if result.answers is not None:
            stressed.answers[index] = result.answers
        else:
            lines = (result.reason or "").strip().splitlines()
            stressed.problems.append(f"variant {index} {draw(stressed.question, index)}: "
                                     f"{result.status.value}: {lines[0] if lines else ''}")
    for stressed in found.values():
        _read_together(stressed, n)
    return list(found.values())


def _read_together(stressed: Stressed, n: int) -> None:
    q = stressed.question
    if len(stressed.answers) > 1 and n > 1:
        for name in q.answers:
            values = {repr(a[name]) for a in stressed.answers.values()}
            if len(values) == 1:
                stressed.problems.append(f"answer {name} is {values.pop()} in every one of "
                                         f"{len(stressed.answers)} variants: a degenerate "
                                         "range, the parameters do not vary it")
    by_text = defaultdict(list)
    for index, answers in sorted(stressed.answers.items()):
        params = draw(q, index)
        text = "\n".join(fill_text(q.text(lang).question, params, answers)
                         for lang in ("zh", "en"))
        by_text[text].append(index)
    for indexes in by_text.values():
        first = indexes[0]
        for other in indexes[1:]:
            differ = agree(q, stressed.answers[first], stressed.answers[other])
            if differ:
                stressed.problems.append(
                    f"variants {first} and {other} ask the same question but their answers "
                    f"differ ({'; '.join(differ)}): a parameter changes the answer without "
                    "appearing in the question")
                break


def run_stress_command(args) -> int:
    from .loader import load_bank
    from .verify.builds import build_for

    bank = load_bank(args.content)
    parametrized = [q for q in bank.questions if q.params]
    if args.ids:
        known = {q.id for q in bank.questions}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise PtbankError(f"no question {', '.join(unknown)} in {args.content}")
        plain = [i for i in args.ids if not bank.question(i).params]
        if plain:
            raise PtbankError(f"{', '.join(plain)} has no `params`, so no variants to stress; "
                              f"the parametrized questions: "
                              f"{', '.join(q.id for q in parametrized) or 'none'}")
        questions = [bank.question(i) for i in args.ids]
    else:
        questions = parametrized
        if not questions:
            raise PtbankError(f"no question in {args.content} declares `params`")
    interpreter = build_for(args.torch, log=_note) if args.torch else None
    # a log (CI, a pipe) gets no progress bar: say what runs before the minutes it may take
    _note(f"ptbank: solving {args.n} variant(s) of {len(questions)} question(s) "
          f"({', '.join(q.id for q in questions[:6])}{', ...' if len(questions) > 6 else ''})")
    began = time.perf_counter()
    results = stress_questions(bank, questions, args.n, interpreter=interpreter, jobs=args.jobs,
                               sandbox=args.sandbox, progress=sys.stderr.isatty())
    failed = 0
    for stressed in results:
        verdict = "FAILED" if stressed.problems else "ok"
        print(f"{stressed.question.id}: {verdict} — {len(stressed.answers)}/{args.n} variants "
              f"solved; " + "; ".join(stressed.spread()))
        for problem in stressed.problems[:12]:
            print(f"  {problem}")
        if len(stressed.problems) > 12:
            print(f"  ... and {len(stressed.problems) - 12} more")
        failed += bool(stressed.problems)
    _note(f"ptbank: stressed {len(results)} question(s) × {args.n} variants in "
          f"{time.perf_counter() - began:.1f} s: {failed} failed")
    return EXIT_FAILED if failed else 0


def _note(message: str) -> None:
    print(message, file=sys.stderr)

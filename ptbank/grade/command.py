"""`ptbank grade` and `ptbank practice`: find the task, read the files, grade, print, write.

As in `verify`, the zygote starts first (grading always runs), so that torch's import
overlaps loading the bank.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import EXIT_FAILED, PtbankError

DEFAULT_GRADES = Path("build/grades")


def run_grade_command(args) -> int:
    """0 when every submission was graded, whatever its score; 1 when one could not be."""
    from ..verify.launch import DEFAULT_CACHE, HeadStart

    files = _submission_files(args.files)
    if (args.sheet is None) != (args.candidate is None):
        raise PtbankError("--sheet and --candidate go together: the grade is recorded for "
                          "that candidate's sheet")
    if args.sheet and len(files) > 1:
        raise PtbankError("--sheet/--candidate records one candidate's grade: give one file")
    with HeadStart(DEFAULT_CACHE, use_cache=False, sandboxed=args.sandbox) as head_start:
        from ..loader import load_bank
        from .run import grade_submissions, read_submission

        bank = load_bank(args.content)
        variant = args.variant
        if args.sheet:
            given = _check_sheet(args.ledger, args.sheet, args.candidate, args.task)
            if variant is not None and given is not None and variant != given:
                raise PtbankError(f"sheet {args.sheet} gave variant {given} of {args.task}, "
                                  f"not {variant}: drop --variant")
            variant = given if given is not None else variant
        task = find_task(bank, args.task, variant or 0)
        grades = grade_submissions(bank, task, [read_submission(f) for f in files],
                                   jobs=args.jobs, progress=len(files) > 1 and sys.stderr.isatty(),
                                   head_start=head_start, sandbox=args.sandbox)
    _show_and_write(args, task, grades)
    if args.sheet and grades[0].gradable:
        _record(args.ledger, args.sheet, args.candidate, grades[0])
        _note(f"ptbank: grade recorded in {args.ledger} for {args.candidate}, sheet {args.sheet}")
    return 0 if all(g.gradable for g in grades) else EXIT_FAILED


def find_task(bank, task_id: str, variant: int = 0):
    """The grading task of `task_id` (of that variant, for a parametrized task: its checks
    with that variant's parameters), or a usage error that lists the gradable tasks."""
    from ..variants import VARIANTS, Variant, draw, resolve
    from .task import gradable_tasks, grading_task

    ids = [q.id for q in gradable_tasks(bank.questions)]
    try:
        question = bank.question(task_id)
    except KeyError:
        raise PtbankError(f"no question {task_id!r}; the tasks that can be graded: "
                          f"{', '.join(ids)}") from None
    if task_id not in ids:
        raise PtbankError(f"{task_id} has no numbered checks to grade against; the tasks that "
                          f"can be graded: {', '.join(ids)}")
    if variant and not question.params:
        raise PtbankError(f"{task_id} has no `params`: it has no variant {variant}")
    if question.params:
        if not 0 <= variant <= VARIANTS:
            raise PtbankError(f"--variant {variant}: {task_id} has variants 0 to {VARIANTS}")
        question = resolve(question, Variant(variant, draw(question, variant)))
    return grading_task(question)


def run_practice_command(args) -> int:
    from ..atomic import write_text_atomic
    from ..loader import load_bank
    from .practice import starter_code

    task = find_task(load_bank(args.content), args.task, args.variant)
    out = args.out or Path(f"{task.id.replace('-', '_')}.py")
    if out.exists() and not args.force:
        raise PtbankError(f"{out} exists (your attempt?); give another --out, or --force to "
                          "overwrite it")
    write_text_atomic(out, starter_code(task, args.lang))
    names = ", ".join(task.required)
    _note(f"wrote {out}: write {names} as the question asks, then grade it with\n"
          f"  ptbank grade {task.id} {out}")
    return 0


def _submission_files(paths: list[Path]) -> list[Path]:
    files = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.glob("*.py") if p.is_file())
            if not found:
                raise PtbankError(f"{path}: no .py file in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise PtbankError(f"{path}: no such file")
    names = [f.stem for f in files]
    if len(files) > 1 and len(set(names)) < len(names):
        raise PtbankError("two submissions share a file name; their results would overwrite "
                          "each other: " + ", ".join(sorted({n for n in names
                                                             if names.count(n) > 1})))
    return files


def _show_and_write(args, task, grades) -> None:
    from rich.console import Console

    from ..atomic import write_text_atomic
    from .results import dumps
    from .view import print_grade, print_summary

    console = Console(highlight=False)
    if len(grades) == 1:
        print_grade(grades[0], console, args.lang)
        if args.json:
            write_text_atomic(args.json, dumps(grades[0], args.lang))
        return
    folder = args.json or DEFAULT_GRADES / task.id
    for grade in grades:
        write_text_atomic(folder / f"{Path(grade.submission).stem}.json",
                          dumps(grade, args.lang))
    print_summary(grades, console, args.lang)
    _note(f"ptbank: {len(grades)} results in {folder}/")


def _check_sheet(ledger: Path, sheet: str, candidate: str, task_id: str) -> int | None:
    """The sheet was issued, with this task on it, and to this candidate if to anyone; the
    variant of the task it gave, if the task is parametrized."""
    from ..ledger import read_ledger_now, sheets

    issued = [r for r in sheets(read_ledger_now(ledger)) if r.sheet == sheet]
    if not issued:
        raise PtbankError(f"{ledger}: no sheet {sheet} was issued (see `ptbank ledger`)")
    if not any(task_id in r.questions for r in issued):
        raise PtbankError(f"sheet {sheet} has no task {task_id}; its questions: "
                          f"{', '.join(issued[-1].questions)}")
    named = {r.candidate for r in issued if r.candidate}
    if named and candidate not in named:
        raise PtbankError(f"sheet {sheet} was issued to {', '.join(sorted(named))}, "
                          f"not {candidate}")
    return issued[-1].variants.get(task_id)


def _record(ledger: Path, sheet: str, candidate: str, grade) -> None:
    from ..ledger import GradeRecord, append_record
    from ..render.document import build_date
    from .results import as_record_checks

    append_record(ledger, GradeRecord(
        grade=grade.task, sheet=sheet, candidate=candidate, date=build_date(),
        points=grade.points, max_points=grade.max_points, checks=as_record_checks(grade),
        sha256=grade.sha256, torch=grade.torch))


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

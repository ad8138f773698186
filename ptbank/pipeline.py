"""The pipeline, top to bottom: load → verify → select → render → write.

`build_command` prints the bank; `sheet_command` prints one interview sheet. Both go through
the same stages; only the selection and the template differ.
"""

from __future__ import annotations

import os
import sys
import time
from functools import partial

from rich.console import Console
from rich.progress import Progress, TextColumn

from .artifacts import Artifact
from .atomic import atomic_folder, atomic_path
from .errors import VerificationRequired
from .loader import load_bank
from .models import Bank, Level
from .render import FORMATS, PRINT_FORMATS
from .render.document import Document, build_date, references_for, sections_for
from .render.labels import label
from .render.markdown import render_markdown
from .render.part_cache import PartCache
from .render.questions import prune_store
from .select import questions_for_level
from .stamp import stamp_for
from .variants import VARIANTS, Solved
from .workers import output_lock, pdf_workers, rendered

console = Console(stderr=True)


# --- the bank -------------------------------------------------------------------------------

def build_command(args) -> int:
    bank = load_bank(args.content)
    reports = verification_gate(bank, draft=args.draft, jobs=args.jobs, sandbox=args.sandbox,
                                content=args.content, reverify=args.reverify)
    names = PRINT_FORMATS if args.format == "all" else (args.format,)
    editions = {"both": (False, True), "with": (True,), "without": (False,)}[args.answers]
    documents: dict[tuple, tuple[Document, str]] = {}
    artifacts = []
    for fmt in (FORMATS[name] for name in names):
        out = args.out or fmt.default_out
        for level in ("all",) if fmt.whole_bank else args.level:
            for lang in args.lang:
                for answers in (True,) if fmt.study else editions:
                    key = (level, lang, answers)
                    if key not in documents:
                        documents[key] = bank_document(bank, level, lang, answers, reports)
                    doc, markdown = documents[key]
                    artifacts.append(Artifact(fmt.path(out, level, lang, answers),
                                              fmt.name, markdown, doc))
    write_artifacts(artifacts, jobs=args.jobs)
    return 0


def bank_document(bank: Bank, level: str, lang: str, answers: bool,
                  reports) -> tuple[Document, str]:
    """The whole-bank document for one level, language and edition, and its Markdown."""
    langs = ("zh", "en") if lang == "bi" else (lang,)
    solved = Solved(bank, reports)
    note = {l: label(l, "variant_canonical", n=VARIANTS) for l in langs}
    questions = [solved.printed(q, 0, note)
                 for q in questions_for_level(bank, None if level == "all" else Level(level))]
    title = " / ".join(getattr(bank.meta.title, l) for l in langs)
    edition = label(langs[0], "edition_answers" if answers else "edition_questions")
    doc = Document(
        title=title,
        subtitle=f"{label(langs[0], level)} · {edition}",
        langs=langs,
        answers=answers,
        stamp=stamp_for(reports, questions),
        version=bank.meta.version,
        date=build_date(),
        sections=sections_for(bank, questions, langs),
        references=references_for(bank),
    )
    return doc, render_markdown("bank.md.j2", doc)


# --- verification gate ----------------------------------------------------------------------

def verification_gate(bank: Bank, *, draft: bool, jobs: int | None, sandbox: bool = True,
                      content=None, reverify: bool = False):
    """Verify under every build of the bank (cheap when cached); refuse what does not pass.

    The committed verification record (verify/record.py) vouches for what the release
    verified, unless `reverify`: a snippet it passed under exactly the local build is not run
    again, and a declared build it covers entirely is not even installed. Returns one
    VerifyReport per torch build (the pinned one first), or None for a draft, which is not
    verified at all.
    """
    if draft:
        return None
    from .verify import verify_bank  # imports no torch; a cached bank verifies in a blink
    from .verify.builds import build_for
    from .verify.interpreter import Interpreter
    from .verify.record import Record, record_path

    record = None if reverify or content is None else Record.load(record_path(content))
    reports = []
    for version in (None, *bank.meta.verify_also_with_torch):
        report = record and version and record.report_without_running(bank, version)
        if not report:
            interpreter = build_for(version, log=console.print) if version else Interpreter.current()
            report = verify_bank(bank, jobs=jobs, progress=sys.stderr.isatty(),
                                 interpreter=interpreter, sandbox=sandbox, record=record)
        _require_passing(report)
        reports.append(report)
        console.print(_verified_line(report))
    return reports


def _verified_line(report) -> str:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts.items()) if n)
    recorded = sum(bool(r.recorded) for r in report.results)
    cached = sum(r.cached and not r.imported_from for r in report.results)
    imported = sum(bool(r.imported_from) for r in report.results)
    ran = sum(not (r.recorded or r.cached or r.status.value == "skipped")
              for r in report.results)
    elsewhere = f"{imported} imported (not run here), " if imported else ""
    return (f"verified: {counts} ({recorded} by the release record, {cached} from cache, "
            f"{elsewhere}{ran} run here) in {report.elapsed:.1f} s, "
            f"torch {report.torch_version}")


def _require_passing(report) -> None:
    if report.ok:
        return
    bad = [r for r in report.results if r.status.value not in ("passed", "skipped")]
    names = ", ".join(f"{r.question_id}/{r.snippet_id} ({r.status.value})" for r in bad[:8])
    raise VerificationRequired(
        f"{len(bad)} snippet(s) do not pass under torch {report.torch_version}: {names}"
        f"{' ...' if len(bad) > 8 else ''}\n"
        "run `ptbank verify` for details, or build with --draft")


# --- rendering and writing ------------------------------------------------------------------

def write_artifacts(artifacts: list[Artifact], jobs: int | None) -> None:
    """Render what is stale (in parallel processes), skip what is fresh, write atomically;
    then drop what the render caches hold that no build uses any more."""
    with output_lock(artifacts):
        _write_stale(artifacts, jobs)
    PartCache().prune()
    prune_store()


def _write_stale(artifacts: list[Artifact], jobs: int | None) -> None:
    # longest first: parallel PDFs finish together, and a deck of every level renders the
    # cards that the decks of one level then share
    stale = sorted((a for a in artifacts if not a.is_fresh()), key=lambda a: -len(a.markdown))
    started = time.perf_counter()
    wanted = jobs or os.cpu_count() or 1
    workers = pdf_workers(stale, wanted)
    # one artifact at a time: it may use every core itself (a PDF lays out its parts at once)
    render = partial(_render, jobs=wanted if workers == 1 else 1)
    with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[last]}"),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("rendering", total=len(stale), last="")
        for artifact in rendered(stale, workers, render):
            artifact.mark_fresh()
            bar.console.print(f"  wrote {artifact.path}")
            bar.update(task, advance=1, last=artifact.path.name)
    console.print(f"ptbank: {len(stale)} written, {len(artifacts) - len(stale)} up to date "
                  f"in {time.perf_counter() - started:.1f} s")


def _render(artifact: Artifact, jobs: int = 1) -> None:
    fmt = FORMATS[artifact.format]
    with (atomic_folder if fmt.folder else atomic_path)(artifact.path) as tmp:
        fmt.render()(artifact.markdown, artifact.doc, tmp, **({"jobs": jobs} if fmt.parallel
                                                              else {}))


def sheet_command(args) -> int:
    from .ledger import held_ledger, read_ledger_now
    from .sheet import LEDGER_NAME, build_sheet

    bank = load_bank(args.content)
    reports = verification_gate(bank, draft=args.draft, jobs=None, sandbox=args.sandbox,
                                content=args.content, reverify=args.reverify)
    path = args.ledger or args.out / LEDGER_NAME
    if args.ledger_upto is not None:  # regenerating: the ledger's first records, unchanged
        artifacts, _ = build_sheet(bank, args, reports, read_ledger_now(path))
        write_artifacts(artifacts, jobs=None)
        return 0
    with held_ledger(path) as ledger:  # from reading it to recording this sheet
        artifacts, issued = build_sheet(bank, args, reports, ledger.records)
        write_artifacts(artifacts, jobs=None)
        ledger.append(issued)
    console.print(f"ptbank: sheet {issued.sheet} recorded in {path}")
    return 0

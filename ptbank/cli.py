"""Command line: argument parsing and one call into the core per command.

Start-up stays light (no torch, no WeasyPrint) so that `ptbank lint` answers in a blink;
each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import EXIT_BAD_INPUT, ContentError, PtbankError
from .outputs import check_outputs

DEFAULT_CONTENT = Path("content")

EPILOG = """\
examples:
  ptbank lint                         check every question file (exit 2 on errors)
  ptbank verify --jobs 2              run every snippet under each torch build of the bank
  ptbank verify --torch 2.13.0        the same under torch 2.13.0 only (installed once)
  ptbank drift --torch 2.13.0         what differs between the pinned torch and 2.13.0
  ptbank build --format pdf --level advanced
  ptbank sheet --level intermediate --minutes 45 --seed 7
  ptbank new view-vs-reshape --topic tensors --level beginner
  ptbank practice rope                write rope.py, a starter file for the task
  ptbank grade rope rope.py           score it against the task's hidden checks

exit status: 0 ok · 1 verification failed · 2 bad content or usage
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_outputs(args)
        return args.handler(args) or 0
    except ContentError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"ptbank: {exc}", file=sys.stderr)
        return exc.exit_status
    except PtbankError as exc:
        print(f"ptbank: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("ptbank: interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptbank",
        description="A verified, bilingual PyTorch interview question bank and its printer.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ptbank {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for register in (_lint, _stats, _new, _schema, _doctor, _verify, _drift, _cache,
                     _build, _sheet, _ledger, _grade, _practice, _stress):
        register(commands)
    return parser


def _content_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--content", type=Path, default=DEFAULT_CONTENT, metavar="DIR",
                   help="content folder with bank.yaml, topics.yaml and question files "
                        "(default: %(default)s)")


def _choices(*allowed: str):
    """argparse type for a comma-separated list drawn from `allowed`."""
    def parse(text: str) -> list[str]:
        values = [v.strip() for v in text.split(",") if v.strip()]
        wrong = [v for v in values if v not in allowed]
        if wrong or not values:
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose from {', '.join(allowed)} (comma-separated)")
        return list(dict.fromkeys(values))
    return parse


def _command(commands, name: str, help: str, description: str | None = None):
    p = commands.add_parser(name, help=help, description=description or help,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    return p


# --- lint -----------------------------------------------------------------------------------

def _lint(commands) -> None:
    p = _command(commands, "lint", "check the content: schema, parity, printable code",
                 "Load every question file and apply the lint rules. All problems are\n"
                 "reported at once as path:line: field: message.")
    _content_option(p)
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--todo", action="store_true",
                   help="also list the questions that lack interview fields (anchors, hints, "
                        "red_flags, bonus): what the interviewer edition needs")
    p.set_defaults(handler=_run_lint)


def _run_lint(args) -> int:
    from .lint import lint
    from .loader import load_bank

    bank = load_bank(args.content)
    problems = lint(bank)
    for problem in problems:
        print(problem, file=sys.stderr)
    errors = [p for p in problems if p.severity == "error" or args.strict]
    warnings = len(problems) - len(errors) if not args.strict else 0
    _interview_todo(bank, args.todo)
    print(f"ptbank: {len(bank.questions)} questions, {len(errors)} error(s), "
          f"{warnings} warning(s)", file=sys.stderr)
    return EXIT_BAD_INPUT if errors else 0


def _interview_todo(bank, listed: bool) -> None:
    """With --todo: which questions lack interview fields (a list, not warnings)."""
    from .lint import lacks_interview_fields

    if not listed:
        return
    todo = [(q, lacks_interview_fields(q)) for q in bank.questions]
    todo = [(q, fields) for q, fields in todo if fields]
    for q, fields in todo:
        print(f"{bank.where(q.id, 'en')}: todo: {q.id} lacks {', '.join(fields)}",
              file=sys.stderr)
    print(f"ptbank: {len(todo)} question(s) lack interview fields", file=sys.stderr)


# --- stats ----------------------------------------------------------------------------------

def _stats(commands) -> None:
    p = _command(commands, "stats", "questions by level, topic and kind; seed coverage")
    _content_option(p)
    p.set_defaults(handler=_run_stats)


def _run_stats(args) -> int:
    from .loader import load_bank
    from .stats import print_stats

    print_stats(load_bank(args.content))
    return 0


# --- new ------------------------------------------------------------------------------------

def _new(commands) -> None:
    p = _command(commands, "new", "scaffold a bilingual question file",
                 "Write content/<topic>/<id>.yaml with every field to fill in and a\n"
                 "yaml-language-server modeline for editor completion.")
    p.add_argument("id", help="kebab-case question id, e.g. view-vs-reshape")
    p.add_argument("--topic", required=True, help="a key of topics.yaml")
    p.add_argument("--level", required=True, choices=["beginner", "intermediate", "advanced"])
    p.add_argument("--kind", default="concept", choices=["concept", "coding"])
    _content_option(p)
    p.set_defaults(handler=_run_new)


def _run_new(args) -> int:
    from .scaffold import new_question

    path = new_question(args.content, args.id, args.topic, args.level, args.kind)
    print(path)
    return 0


# --- schema ---------------------------------------------------------------------------------

def _schema(commands) -> None:
    p = _command(commands, "schema", "print the JSON Schema of a question file",
                 "The schema is generated from ptbank's models; editors use it for\n"
                 "completion and checking (see the modeline `ptbank new` writes).")
    p.add_argument("--out", type=Path, help="write to this file instead of stdout")
    p.set_defaults(handler=_run_schema, output_files=("out",))


def _run_schema(args) -> int:
    from .scaffold import question_schema_json

    text = question_schema_json()
    if args.out:
        from .atomic import write_text_atomic
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


# --- doctor ---------------------------------------------------------------------------------

def _doctor(commands) -> None:
    p = _command(commands, "doctor", "check torch, fonts and tools; print how to fix what is missing")
    _content_option(p)
    p.set_defaults(handler=_run_doctor)


def _run_doctor(args) -> int:
    from .doctor import run_doctor
    from .loader import load_bank

    try:  # the bank names the other torch builds; doctor answers even when it does not load
        also = load_bank(args.content).meta.verify_also_with_torch
    except PtbankError:
        also = []
    return run_doctor(also)


# --- verify ---------------------------------------------------------------------------------

def _verify(commands) -> None:
    p = _command(commands, "verify", "run every snippet under each torch build of the bank",
                 "Each snippet runs in its own forked process (own process group, temp dir,\n"
                 "memory limit, timeout). Results are cached per torch build by code,\n"
                 "expectations and versions, so an unchanged bank re-verifies in a blink.\n"
                 "\n"
                 "Builds: the pinned torch (the one ptbank runs under), then every version\n"
                 "bank.yaml names in verify_also_with_torch, each in build/envs/torch-VERSION\n"
                 "(installed on first use). --torch or --python verifies under that one only.\n"
                 "\n"
                 "Snippets run in a sandbox (bubblewrap): the machine read-only but for the\n"
                 "run's own folder, loopback-only network, no signals beyond it.\n"
                 "\n"
                 "The verification record (content/verification-record.jsonl) lets `build` and\n"
                 "`sheet` skip what the release verified; `verify` itself never uses it. After\n"
                 "a passing run, --record rewrites it for the builds that ran; --check-record\n"
                 "fails when it claims anything this run does not confirm (CI runs it). Both\n"
                 "rest on this machine's runs alone: a verdict `ptbank cache import` brought\n"
                 "in is run again here for them.\n"
                 "\n"
                 "CPUs: snippets run with this machine's vector ISA and the cores divided\n"
                 "among --jobs. --cpu-capability avx2 runs them as on an x86-64 CPU without\n"
                 "AVX-512 (most AMD EPYC before Zen 4), `default` as on one with no vector\n"
                 "ISA: torch's ATEN_CPU_CAPABILITY, which ATen and Inductor follow, with\n"
                 "oneDNN and MKL capped to match (exporting them yourself does not reach\n"
                 "snippets). --threads N gives each snippet N intra-op threads. A verdict\n"
                 "is cached per capability and thread count, and reports name them. To\n"
                 "check that verdicts hold on other CPUs, verify also with e.g.\n"
                 "  ptbank verify --torch 2.15.0 --cpu-capability avx2 --threads 1\n"
                 "Exit status 0 only when every snippet that can run here passes.")
    _content_option(p)
    _build_options(p)
    _run_options(p)
    _cpu_options(p)
    record = p.add_mutually_exclusive_group()
    record.add_argument("--record", action="store_true",
                        help="after a passing run, write the verification record (make record); "
                             "needs the whole bank, in the sandbox")
    record.add_argument("--check-record", action="store_true",
                        help="exit 1 when the committed record disagrees with this run or "
                             "misses a snippet that passed")
    p.add_argument("--json", type=Path, metavar="FILE", help="write the per-snippet report as JSON")
    p.add_argument("--junit", type=Path, metavar="FILE",
                   help="write the report as JUnit XML (one testsuite per build; "
                        "`ptbank cache import` reads it back)")
    p.set_defaults(handler=_run_verify, output_files=("json", "junit"))


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="snippets run at once (default: number of CPU cores)")
    p.add_argument("--only", nargs="+", metavar="ID", default=None,
                   help="question ids (or question-id/snippet-id) to run")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not update the cache")
    p.add_argument("--fresh-ranks", action="store_true",
                   help="processes a snippet spawns import torch themselves, as a plain "
                        "`spawn` does, instead of being forked from a server made before the "
                        "snippet ran (slower; to compare verdicts and times)")
    _sandbox_option(p)


def _cpu_options(p: argparse.ArgumentParser) -> None:
    from .verify.launch import CPU_CAPABILITIES

    p.add_argument("--cpu-capability", choices=CPU_CAPABILITIES, default=None,
                   help="run snippets as on a CPU with only this vector ISA: sets torch's "
                        "ATEN_CPU_CAPABILITY for them, and ONEDNN_MAX_CPU_ISA and "
                        "MKL_ENABLE_INSTRUCTIONS to match (avx2: no AVX-512; default: no SIMD "
                        "kernels); default: this machine's own")
    p.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                   help="intra-op threads per snippet (torch.set_num_threads; default: the "
                        "cores divided among --jobs)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive count")
    return value


def _sandbox_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                   help="run snippets unconfined, where bubblewrap cannot run (they can then "
                        "write your files and reach the network; reports and stamps say so)")


def _build_options(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("--torch", metavar="VERSION",
                       help="verify under this torch version (e.g. 2.13.0), installed once "
                            "into build/envs/torch-VERSION beside requirements.lock's other pins")
    which.add_argument("--python", metavar="PATH",
                       help="verify under this interpreter (it needs torch and what the "
                            "snippets import)")


def _run_verify(args) -> int:
    from .verify.command import run_verify_command

    if args.record and (args.only or not args.sandbox):
        raise PtbankError("--record records the whole bank, verified in the sandbox: "
                          "drop --only and --no-sandbox")
    if (args.record or args.check_record) and (args.cpu_capability or args.threads):
        raise PtbankError("the verification record is of native runs: run --record and "
                          "--check-record without --cpu-capability and --threads")
    return run_verify_command(args)


def _drift(commands) -> None:
    p = _command(commands, "drift", "compare verdicts and warnings under two torch builds",
                 "Verifies the bank (cached) under the pinned torch and under another build,\n"
                 "and lists every snippet whose verdict or warnings differ, with the first\n"
                 "line that differs. The other build: --torch or --python, else the first\n"
                 "version bank.yaml names in verify_also_with_torch. Differences in\n"
                 "warnings that bank.yaml's explained_drift names (with why) are listed apart.\n"
                 "Exit status 0 when nothing unexplained differs, 1 when something does.")
    _content_option(p)
    _build_options(p)
    _run_options(p)
    p.add_argument("--json", type=Path, metavar="FILE", help="write the differences as JSON")
    p.set_defaults(handler=_run_drift, output_files=("json",))


def _run_drift(args) -> int:
    from .verify.command import run_drift_command

    return run_drift_command(args)


def _cache(commands) -> None:
    p = _command(commands, "cache", "bring verdicts reached on another machine into the cache",
                 "ptbank cache import FILE...   where FILE is `ptbank verify --junit` output\n"
                 "or a cache folder (build/cache/verify) copied from another machine, e.g. a\n"
                 "GPU runner that ran the snippets this machine skips. A verdict counts here\n"
                 "only for the same code under the same torch, Python and module versions;\n"
                 "reports and stamps say it was imported, not run here, and `verify --record`\n"
                 "and `--check-record` never count it.")
    actions = p.add_subparsers(title="actions", metavar="ACTION", required=True)
    imp = actions.add_parser("import", help="merge JUnit reports or cache folders")
    imp.add_argument("sources", nargs="+", type=Path, metavar="FILE")
    imp.set_defaults(handler=_run_cache_import)


def _run_cache_import(args) -> int:
    from .verify.imports import run_cache_import

    return run_cache_import(args.sources)


# --- build ----------------------------------------------------------------------------------

def _build(commands) -> None:
    p = _command(commands, "build", "print the bank as Markdown, DOCX and/or PDF",
                 "Artifacts: build/ptbank-<level>-<lang>.<ext> (questions only) and\n"
                 "build/ptbank-<level>-<lang>-answers.<ext> (with the answer key); the study\n"
                 "formats: build/site/<lang>/ (open index.html) and build/anki/*.apkg.\n"
                 "Content must be verified and passing unless --draft is given: what the\n"
                 "committed verification record vouches for under this torch build is not run\n"
                 "again (--reverify runs it), and everything else runs here, cached.")
    _content_option(p)
    p.add_argument("--format", default="pdf", choices=["md", "docx", "pdf", "html", "anki", "all"],
                   help="md, docx, pdf (the printed editions; all = the three), html (the "
                        "offline study site of the whole bank, every level, answers folded: "
                        "OUT/LANG/, OUT/index.html chooses the language) or anki "
                        "(flashcard decks per level: OUT/ptbank-LEVEL-LANG.apkg); "
                        "default: %(default)s")
    p.add_argument("--level", default=["all"], metavar="LEVEL[,LEVEL]",
                   type=_choices("beginner", "intermediate", "advanced", "all"),
                   help="beginner, intermediate, advanced, or all (one document with every "
                        "level); a comma list builds several (default: all)")
    p.add_argument("--lang", default=["zh", "en"], metavar="LANG[,LANG]",
                   type=_choices("zh", "en", "bi"),
                   help="zh, en or bi (each question in Chinese, then English); a comma list "
                        "builds several (default: zh,en)")
    answers = p.add_mutually_exclusive_group()
    answers.add_argument("--answers", dest="answers", action="store_const", const="with",
                         help="only the edition with the answer key")
    answers.add_argument("--no-answers", dest="answers", action="store_const", const="without",
                         help="only the questions-only edition")
    p.set_defaults(answers="both")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="the folder the artifacts are written into (default: build; "
                        "build/site for html, build/anki for anki)")
    p.add_argument("--draft", action="store_true",
                   help="build without passing verification; every page says DRAFT")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="artifacts rendered at once (default: number of CPU cores)")
    _sandbox_option(p)
    _reverify_option(p)
    p.set_defaults(handler=_run_build, output_dirs=("out",))


def _reverify_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reverify", action="store_true",
                   help="ignore the verification record: run (or take from the cache) every "
                        "snippet here, under every build")


def _run_build(args) -> int:
    from .pipeline import build_command

    return build_command(args)


# --- sheet ----------------------------------------------------------------------------------

def _sheet(commands) -> None:
    p = _command(commands, "sheet", "a seeded, time-boxed interview sheet (two editions)",
                 "Selects questions for one interview, deterministically from the bank\n"
                 "version, the arguments and --seed, and writes a candidate edition and an\n"
                 "interviewer edition: build/sheets/sheet-<ID>-candidate-<lang>.<ext> and\n"
                 "sheet-<ID>-interviewer-<lang>.<ext>. Rerunning the command printed on a sheet\n"
                 "regenerates it.\n"
                 "\n"
                 "One level (--level), or a role profile from content/profiles.yaml\n"
                 "(--profile): its topic weights, level mix, coding task and buffer.\n"
                 "Every sheet issued is appended to the ledger (--ledger, default\n"
                 "OUT/ledger.jsonl): a new sheet prefers the questions given least and never\n"
                 "repeats one the same --candidate was given. `ptbank ledger` shows exposure.\n"
                 "\n"
                 "  ptbank sheet --profile training-infra --minutes 60 --seed 7 --candidate A12\n"
                 "  ptbank sheet --profile training-infra --minutes 60 --seed 7 --loop "
                 "infra-q4 --candidate B3")
    _content_option(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--level", choices=["beginner", "intermediate", "advanced"])
    what.add_argument("--profile", metavar="NAME",
                      help="a role profile of content/profiles.yaml (`ptbank ledger` lists them)")
    p.add_argument("--topics", type=lambda s: [t for t in s.split(",") if t], default=None,
                   metavar="A,B", help="only these topics (default: all)")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--minutes", type=_positive, help="time budget to fill without exceeding it")
    size.add_argument("--count", type=_positive, help="number of questions")
    p.add_argument("--seed", type=int, required=True, help="any integer; same seed, same sheet")
    p.add_argument("--lang", default="zh", choices=["zh", "en", "bi"])
    p.add_argument("--format", default="pdf", choices=["md", "docx", "pdf", "all"])
    p.add_argument("--out", type=Path, default=Path("build/sheets"), metavar="DIR")
    p.add_argument("--exclude", type=lambda s: [t for t in s.split(",") if t], default=[],
                   metavar="ID,...", help="question ids to leave out (e.g. a first round's)")
    p.add_argument("--candidate", metavar="LABEL",
                   help="who the sheet is for (any label): questions the ledger gave them "
                        "before never appear")
    p.add_argument("--loop", metavar="NAME",
                   help="an interview loop (with --candidate): its first sheet is drawn as "
                        "usual, every later candidate of NAME gets the same questions, and one "
                        "they had before is replaced by a stated substitute")
    p.add_argument("--ledger", type=Path, metavar="FILE",
                   help="the ledger of sheets issued (default: OUT/ledger.jsonl)")
    p.add_argument("--ledger-upto", type=_not_negative, metavar="N",
                   help="regenerate a sheet as the ledger's first N records saw it; the sheet "
                        "is not recorded again (the interviewer edition prints this command)")
    p.add_argument("--draft", action="store_true",
                   help="allow unverified content; every page says DRAFT")
    _sandbox_option(p)
    _reverify_option(p)
    p.set_defaults(handler=_run_sheet, output_dirs=("out",), output_files=("ledger",))


def _ledger(commands) -> None:
    p = _command(commands, "ledger", "how often each question and profile was given",
                 "Reads the ledger of sheets issued (`ptbank sheet` appends to it) and prints\n"
                 "exposure per question (most given first) and per profile: sheets,\n"
                 "candidates, and how evenly their eligible questions were used.")
    _content_option(p)
    p.add_argument("--ledger", type=Path, default=Path("build/sheets/ledger.jsonl"),
                   metavar="FILE", help="the ledger (default: %(default)s)")
    p.set_defaults(handler=_run_ledger)


def _run_ledger(args) -> int:
    from rich.console import Console

    from .ledger import print_exposure, read_ledger_now
    from .loader import load_bank

    print_exposure(load_bank(args.content), read_ledger_now(args.ledger), Console())
    return 0


# --- stress ---------------------------------------------------------------------------

def _stress(commands) -> None:
    p = _command(commands, "stress", "solve many variants of parametrized questions",
                 "Runs the `solve` of variants 1..N of each question (all parametrized\n"
                 "questions when no ID is given) in the verifier's sandbox, nothing cached,\n"
                 "and fails a question on:\n"
                 "  - a variant that raises, leaves an answer out, or computes one that is\n"
                 "    not finite or outside the answer's min/max;\n"
                 "  - an answer that is the same in every variant (a degenerate range);\n"
                 "  - two variants whose question text reads the same but whose answers\n"
                 "    differ (a value that changes the answer is not in the question).\n"
                 "Run it before a parametrized question ships (R/exams' stresstest):\n"
                 "  ptbank stress kv-cache-size --n 200\n"
                 "Exit status 0 when every question passes, 1 otherwise.")
    _content_option(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="question ids (default: every "
                                                        "parametrized question)")
    p.add_argument("--n", type=_positive_int, default=200, metavar="N",
                   help="variants to solve per question (default: %(default)s)")
    p.add_argument("--torch", metavar="VERSION", help="solve under this torch version "
                                                      "(default: the pinned one)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="variants solved at once (default: number of CPU cores)")
    _sandbox_option(p)
    p.set_defaults(handler=_run_stress)


def _run_stress(args) -> int:
    from .stress import run_stress_command

    return run_stress_command(args)


# --- grade, practice -------------------------------------------------------------------

def _grade(commands) -> None:
    p = _command(commands, "grade", "score code against a coding task's hidden checks",
                 "Runs each FILE in place of the task's reference solution, against its\n"
                 "numbered checks, in the verifier's sandbox under the task's time and memory\n"
                 "limits, and reports each check as passed or failed, with what it compared.\n"
                 "A file that is not Python, or lacks a name the checks call, is not\n"
                 "gradable (it scores nothing, and says why). Output runs in the same\n"
                 "process as the checks: grading is for practice and interviews, not a\n"
                 "fence against a candidate who attacks the checks.\n"
                 "\n"
                 "  ptbank grade rope attempt.py                  one file, check by check\n"
                 "  ptbank grade rope attempt.py --json r.json    PrairieLearn results.json\n"
                 "  ptbank grade rope submissions/                every .py, in parallel;\n"
                 "                                                one JSON each in --json DIR\n"
                 "  ptbank grade rope a.py --sheet 7F3K --candidate A12   record in the ledger\n"
                 "\n"
                 "Exit status: 0 graded (whatever the score) · 1 a file was not gradable\n"
                 "· 2 usage error (unknown task, missing file).")
    _content_option(p)
    p.add_argument("task", metavar="TASK", help="the coding task's question id, e.g. rope")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="submission files, or folders of them (every .py inside)")
    p.add_argument("--json", type=Path, metavar="PATH",
                   help="one file: write its results.json here; several: the folder for one "
                        "JSON each (default then: build/grades/TASK/)")
    p.add_argument("--lang", default="en", choices=["zh", "en"],
                   help="language of the check descriptions (default: %(default)s)")
    p.add_argument("--sheet", metavar="ID", help="the sheet the task was given on (a "
                                                 "parametrized task is graded against the "
                                                 "variant that sheet gave)")
    p.add_argument("--candidate", metavar="LABEL", help="whose submission it is (with --sheet)")
    p.add_argument("--variant", type=int, default=None, metavar="N",
                   help="a parametrized task's variant to grade against (default: the "
                        "sheet's, else 0, the canonical one)")
    p.add_argument("--ledger", type=Path, default=Path("build/sheets/ledger.jsonl"),
                   metavar="FILE", help="the ledger to record the grade in (default: "
                                        "%(default)s)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="submissions graded at once (default: number of CPU cores)")
    _sandbox_option(p)
    p.set_defaults(handler=_run_grade)


def _run_grade(args) -> int:
    from .grade.command import run_grade_command

    return run_grade_command(args)


def _practice(commands) -> None:
    p = _command(commands, "practice", "write a starter file for a coding task",
                 "The question as a docstring, and the signatures and docstrings of what the\n"
                 "task's checks call, with no solution; grade your attempt with `ptbank grade`.\n"
                 "\n"
                 "  ptbank practice rope            writes rope.py\n"
                 "  ptbank grade rope rope.py")
    _content_option(p)
    p.add_argument("task", metavar="TASK", help="the coding task's question id")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="where to write it (default: TASK.py, dashes as underscores)")
    p.add_argument("--lang", default="en", choices=["zh", "en"])
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.add_argument("--variant", type=int, default=0, metavar="N",
                   help="a parametrized task's variant to practise (default: 0, the "
                        "canonical one; a sheet's is in the ledger)")
    p.set_defaults(handler=_run_practice, output_files=("out",))


def _run_practice(args) -> int:
    from .grade.command import run_practice_command

    return run_practice_command(args)


def _at_least(minimum: int):
    """An argparse type: a whole number of at least `minimum`."""
    def whole_number(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {number}")
        return number
    return whole_number


_positive = _at_least(1)
_not_negative = _at_least(0)


def _run_sheet(args) -> int:
    from .pipeline import sheet_command

    if args.loop is not None and args.candidate is None:
        raise PtbankError("--loop gives one sheet to each candidate of the loop: name the "
                          "candidate with --candidate")

    return sheet_command(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

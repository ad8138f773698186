"""Rendering benchmark: ptbank's PDF time against WeasyPrint alone on the same final HTML.

Run: .venv/bin/python bench/render.py [--content DIR] [--level all] [--lang zh] [--repeat 3]
     .venv/bin/python bench/render.py --print-speed [--level advanced] [--fresh-clone]
     .venv/bin/python bench/render.py --study-formats [--repeat 3]

Prints, for the whole bank (answers edition): ptbank PDF time, WeasyPrint-only time on the
HTML ptbank produced, their ratio (our overhead; target <= 1.1x), pages per second, KB per
page (target <= 30), peak memory of a process rendering that PDF and per page, and the DOCX
and Markdown times. Then the study formats as `make site` and `make anki` build them: the site
in zh, en and bi (target < 3 s) and the 12 decks, 4 levels x 3 languages (target < 3 s), each
from the bank's documents: cold (every cache emptied, as in a new clone) and warm (the
questions rendered by an earlier build, as after editing content). Times are the best of --repeat
runs, measured alternately in one process so machine noise hits both sides alike.

--print-speed measures the part cache and parallel parts (pdf.py, part_cache.py) on one
answer key, each print with a cache of its own: laid out whole (as before parts per chapter),
a cold print with --jobs 1 and with --jobs 2, and a re-print after a one-question edit from
the cold print's cache; the CPU-seconds per page of the cold serial print against the same
print of the HTML as it was before uncoloured code tokens were merged (every token a span), with
the pages whose 60 dpi renderings differ between the two; and with
--fresh-clone, the wall time of `make pdf LEVEL=...` in a fresh clone of this repository.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weasyprint import HTML  # noqa: E402

from ptbank.loader import load_bank  # noqa: E402
from ptbank import pipeline  # noqa: E402
from ptbank.artifacts import Artifact  # noqa: E402
from ptbank.pipeline import bank_document, write_artifacts  # noqa: E402
from ptbank.render import FORMATS  # noqa: E402
from ptbank.render.docx import render_docx  # noqa: E402
from ptbank.render.html import render_html  # noqa: E402
from ptbank.render.html import highlight_code  # noqa: E402
from ptbank.render import questions  # noqa: E402
from ptbank.render.pdf import render_pdf  # noqa: E402
from ptbank.render.pdf_parts import PART_CHARS  # noqa: E402
from ptbank.verify import verify_bank  # noqa: E402

PEAK_PDF = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ptbank.loader import load_bank
from ptbank.pipeline import bank_document
from ptbank.render.pdf import render_pdf
from ptbank.verify import verify_bank

content, level, lang, target, part_chars, copies = sys.argv[2:8]


def high_water_kib():  # VmHWM: this process's own peak (ru_maxrss carries the parent's over fork)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


bank = load_bank(Path(content))
if int(copies) > 1:  # the bank's questions over again, as a longer bank would be
    bank = bank.model_copy(update={"questions": tuple(
        q if n == 0 else q.model_copy(update={"id": f"{q.id}-{n}"})
        for q in bank.questions for n in range(int(copies)))})
reports = [verify_bank(bank, progress=False)] if int(copies) == 1 else None
doc, markdown = bank_document(bank, level, lang, True, reports)
before = high_water_kib()
render_pdf(markdown, doc, Path(target), part_chars=int(part_chars))
print(before, high_water_kib())
"""
WHOLE = 10 ** 12
"""A part budget no document reaches: laid out at once, as before pdf_parts.py."""


def peak_pdf(content: Path, level: str, lang: str, part_chars: int, copies: int = 1):
    """(pages, MiB before rendering, peak MiB, seconds) of a fresh process printing one PDF."""
    from pypdf import PdfReader

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "peak.pdf"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PEAK_PDF, str(ROOT), str(content), level,
                               lang, str(target), str(part_chars), str(copies)],
                              capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - started
        before_kb, peak_kb = map(int, done.stdout.split())
        pages = len(PdfReader(target).pages)
        return pages, before_kb / 1024, peak_kb / 1024, seconds, target.stat().st_size / pages


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", type=Path, default=ROOT / "content")
    parser.add_argument("--level", default="all")
    parser.add_argument("--lang", default="zh")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=1,
                        help="peak memory of the bank's questions this many times over "
                             "(2 gives the whole bank's answer key about 1100 pages)")
    parser.add_argument("--memory-only", action="store_true",
                        help="only the peak memory of one PDF, in parts and whole")
    parser.add_argument("--print-speed", action="store_true",
                        help="cold, parallel and after-an-edit prints of one answer key")
    parser.add_argument("--fresh-clone", action="store_true",
                        help="with --print-speed: also `make pdf` in a fresh clone")
    parser.add_argument("--study-formats", action="store_true",
                        help="only `make site` and `make anki`, cold and warm")
    args = parser.parse_args()
    if args.print_speed:
        return print_speed(args)
    if args.study_formats:
        bank = load_bank(args.content)  # the record vouches for every snippet: no verify
        return study_formats(bank, pipeline.verification_gate(
            bank, draft=False, jobs=None, content=args.content)[0], args.repeat)

    peaks = {name: peak_pdf(args.content, args.level, args.lang, chars, args.copies)
             for name, chars in (("in parts", PART_CHARS), ("whole", WHOLE))}
    if args.memory_only:
        _print_peaks(peaks, args.copies)
        return
    bank = load_bank(args.content)
    report = verify_bank(bank, progress=False)  # cached after `make verify`
    started = time.perf_counter()
    doc, markdown = bank_document(bank, args.level, args.lang, True, [report])
    md_time = time.perf_counter() - started
    html = render_html(markdown, doc)

    ours, alone, docx = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        ours_pdf, alone_pdf, docx_file = (Path(tmp) / n for n in ("a.pdf", "b.pdf", "c.docx"))
        for _ in range(args.repeat):
            ours.append(timed(lambda: render_pdf(markdown, doc, ours_pdf)))
            alone.append(timed(lambda: HTML(string=html, base_url=tmp).write_pdf(alone_pdf)))
            docx.append(timed(lambda: render_docx(markdown, doc, docx_file)))
        pages = len(HTML(string=html, base_url=tmp).render().pages)
        size_kb = ours_pdf.stat().st_size / 1024

    best_ours, best_alone = min(ours), min(alone)
    print(f"bank: {len(bank.questions)} questions, level {args.level}, {args.lang}, answers edition")
    print(f"markdown (load excluded)   {md_time:8.3f} s")
    print(f"ptbank PDF                 {best_ours:8.2f} s   (median {statistics.median(ours):.2f})")
    print(f"WeasyPrint alone, same HTML{best_alone:8.2f} s   (median {statistics.median(alone):.2f})")
    print(f"overhead ratio             {best_ours / best_alone:8.3f} x   (target <= 1.1)")
    print(f"pages                      {pages:8d}")
    print(f"pages per second           {pages / best_ours:8.2f}")
    print(f"KB per page                {size_kb / pages:8.1f}     (target <= 30; {size_kb:.0f} KB)")
    _print_peaks(peaks, args.copies)
    print(f"DOCX                       {min(docx):8.2f} s")
    study_formats(bank, report, args.repeat)


def study_formats(bank, report, repeat: int) -> None:
    """`make site` and `make anki` as the build runs them, cold and warm, side by side."""
    site, decks, site_warm, decks_warm = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        questions.STORE = Path(tmp) / "render"  # not the user's build/cache/render
        for _ in range(repeat):
            site.append(timed(lambda: _site(bank, [report], Path(tmp), cold=True)))
            site_warm.append(timed(lambda: _site(bank, [report], Path(tmp), cold=False)))
            decks.append(timed(lambda: _decks(bank, [report], Path(tmp), cold=True)))
            decks_warm.append(timed(lambda: _decks(bank, [report], Path(tmp), cold=False)))
    print(f"bank: {len(bank.questions)} questions, {os.getloadavg()[0]:.1f} load average")
    for name, cold, warm in (("site, zh + en + bi       ", site, site_warm),
                             ("decks, 4 levels x 3 langs", decks, decks_warm)):
        print(f"{name}  {min(cold):8.2f} s   (median {statistics.median(cold):.2f}; "
              "render cache empty)")
        print(f"{' ' * len(name)}  {min(warm):8.2f} s   (median {statistics.median(warm):.2f}; "
              "questions rendered by an earlier build; target < 3)")


def print_speed(args) -> None:
    from ptbank.render.part_cache import PartCache
    from pypdf import PdfReader

    level = "advanced" if args.level == "all" else args.level
    bank = load_bank(args.content)
    reports = pipeline.verification_gate(bank, draft=False, jobs=None, content=args.content)
    doc, markdown = bank_document(bank, level, args.lang, True, reports)
    question = next(item.question for section in doc.sections for item in section.items)
    answer = question.text(args.lang).answer
    sentence = answer.split("\n")[0]
    assert markdown.count(sentence) == 1, "an edit of one question's first answer line"
    edited = markdown.replace(sentence, sentence + " (edited)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)

        def print_pdf(name, text, jobs=1, cache="", part_chars=PART_CHARS):
            cache_dir = PartCache(out / f"cache-{cache or name}")
            before = _cpu_seconds()
            seconds = timed(lambda: render_pdf(text, doc, out / f"{name}.pdf", jobs=jobs,
                                               cache=cache_dir, part_chars=part_chars))
            return seconds, _cpu_seconds() - before

        whole, whole_cpu = print_pdf("whole", markdown, part_chars=None)
        with _every_token_spanned():
            spanned, spanned_cpu = print_pdf("spanned", markdown)
        serial, serial_cpu = print_pdf("serial", markdown)
        changed = _pages_that_differ(out / "spanned.pdf", out / "serial.pdf", out)
        parallel, _ = print_pdf("parallel", markdown, jobs=2)
        edit, _ = print_pdf("edited", edited, cache="serial")
        pages = len(PdfReader(out / "serial.pdf").pages)
        same = (out / "serial.pdf").read_bytes() == (out / "parallel.pdf").read_bytes()
    print(f"answer key: level {level}, {args.lang}, {pages} pages, "
          f"{len(os.sched_getaffinity(0))} cores")
    print(f"laid out whole (before)          {whole:8.1f} s   {whole_cpu / pages:.3f} CPU-s/page")
    print(f"every code token a span (before) {spanned:8.1f} s   {spanned_cpu / pages:.3f} CPU-s/page")
    print(f"cold, parts, --jobs 1            {serial:8.1f} s   {serial_cpu / pages:.3f} CPU-s/page"
          f"   ({serial / whole:.2f} x whole, {serial_cpu / spanned_cpu:.2f} x the CPU of every "
          f"token a span; pages that differ at 60 dpi: {changed or 'none'})")
    print(f"cold, parts, --jobs 2            {parallel:8.1f} s   speed-up {serial / parallel:.2f} x"
          f"   (target >= 1.7 on 2 cores; bytes {'identical' if same else 'DIFFER'})")
    print(f"re-print after a one-question edit {edit:6.1f} s   {edit / serial:.3f} x cold"
          "   (target <= 0.15)")
    if args.fresh_clone:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["git", "clone", "-q", str(ROOT), tmp], check=True)
            started = time.perf_counter()
            subprocess.run(["make", "pdf", f"LEVEL={level}"], cwd=tmp, check=True,
                           capture_output=True)
            print(f"fresh clone, make pdf LEVEL={level}  {time.perf_counter() - started:6.1f} s"
                  " (venv made, record vouching for every snippet)")


@contextlib.contextmanager
def _every_token_spanned():
    """The HTML as before uncoloured code tokens were merged into plain text (html.py's
    highlight_code): each token a span of its own, as Pygments writes it."""
    from ptbank.render import html

    unstyled = html._unstyled
    html._unstyled, _ = (lambda kind: False), highlight_code.cache_clear()
    try:
        yield
    finally:
        html._unstyled, _ = unstyled, highlight_code.cache_clear()


def _pages_that_differ(a: Path, b: Path, work: Path) -> list[int]:
    """Page numbers whose 60 dpi renderings of PDFs `a` and `b` differ (all, if the page
    counts do), as the parts test compares pages."""
    from PIL import Image, ImageChops

    shown = {}
    for pdf in (a, b):
        prefix = work / f"png-{pdf.stem}"
        subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(prefix)], check=True)
        shown[pdf] = sorted(work.glob(f"{prefix.name}-*.png"))
    if len(shown[a]) != len(shown[b]):
        return list(range(1, max(len(shown[a]), len(shown[b])) + 1))
    return [n for n, (x, y) in enumerate(zip(shown[a], shown[b]), 1)
            if ImageChops.difference(Image.open(x).convert("RGB"),
                                     Image.open(y).convert("RGB")).getbbox()]


def _cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children (part workers)."""
    import resource
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _print_peaks(peaks: dict, copies: int) -> None:
    times = f", the bank {copies} times over" if copies > 1 else ""
    for name, (pdf_pages, before, peak, seconds, page_bytes) in peaks.items():
        print(f"peak memory, laid out {name:8s} {peak:6.0f} MiB for {pdf_pages} pages{times} "
              f"({(peak - before) * 1024 / pdf_pages:.0f} KiB per page; {before:.0f} MiB "
              f"before rendering; {seconds:.0f} s; {page_bytes / 1024:.1f} KB per page of "
              "PDF; target < 2048 MiB at 1000 pages)")
    whole, parts = peaks["whole"][2], peaks["in parts"][2]
    print(f"peak memory ratio, parts / whole {parts / whole:6.2f}")


def _empty_caches(disk: bool) -> None:
    """A new process's caches; with `disk`, a new clone's (no question rendered before)."""
    highlight_code.cache_clear()
    questions.clear_caches(disk=disk)


def _site(bank, reports, out: Path, cold: bool) -> None:
    """What `make site` does after verification."""
    _build(bank, reports, out, "html", ("all",), cold)


def _decks(bank, reports, out: Path, cold: bool) -> None:
    """What `make anki` does after verification: 12 decks."""
    _build(bank, reports, out, "anki", ("beginner", "intermediate", "advanced", "all"), cold)


def _build(bank, reports, out: Path, name: str, levels, cold: bool) -> None:
    """The build's own path (pipeline.write_artifacts) into a new folder, quietly."""
    _empty_caches(disk=cold)
    fmt, target = FORMATS[name], Path(tempfile.mkdtemp(dir=out))
    artifacts = []
    for level in levels:
        for lang in ("zh", "en", "bi"):
            doc, markdown = bank_document(bank, level, lang, True, reports)
            artifacts.append(Artifact(fmt.path(target, level, lang, True), name, markdown, doc))
    pipeline.console.quiet = True
    write_artifacts(artifacts, jobs=None)


if __name__ == "__main__":
    main()

"""Rendering benchmark: ptbank's PDF time against WeasyPrint alone on the same final HTML.

Run: .venv/bin/python bench/render.py [--content DIR] [--level all] [--lang zh] [--repeat 3]

Prints, for the whole bank (answers edition): ptbank PDF time, WeasyPrint-only time on the
HTML ptbank produced, their ratio (our overhead; target <= 1.1x), pages per second, KB per
page (target <= 30), and the DOCX and Markdown times. Times are the best of --repeat runs,
measured alternately in one process so machine noise hits both sides alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weasyprint import HTML  # noqa: E402

from ptbank.loader import load_bank  # noqa: E402
from ptbank.pipeline import bank_document  # noqa: E402
from ptbank.render.docx import render_docx  # noqa: E402
from ptbank.render.html import render_html  # noqa: E402
from ptbank.render.pdf import render_pdf  # noqa: E402
from ptbank.verify import verify_bank  # noqa: E402


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
    args = parser.parse_args()

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
    print(f"DOCX                       {min(docx):8.2f} s")


if __name__ == "__main__":
    main()

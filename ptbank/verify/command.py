"""`ptbank verify`: load, verify, print the table and summary, write the requested reports.

Only light modules are imported at the top: on a cold cache the zygote starts first, and the
heavier imports below (pydantic, the loader) happen while it imports torch.
"""

from __future__ import annotations

import os
import sys

from ..errors import EXIT_FAILED
from .launch import DEFAULT_CACHE, HeadStart


def run_verify_command(args) -> int:
    """Exit status 0 when every snippet that can run here passed, 1 otherwise."""
    with HeadStart(DEFAULT_CACHE, use_cache=not args.no_cache) as head_start:
        from ..loader import load_bank
        from .core import verify_bank

        bank = load_bank(args.content)
        report = verify_bank(bank, jobs=args.jobs, only=args.only, use_cache=not args.no_cache,
                             head_start=head_start)
    from rich.console import Console

    from ..atomic import write_text_atomic
    from .report import print_report, to_json, to_junit

    wide = sys.stdout.isatty() or "COLUMNS" in os.environ
    print_report(report, Console(file=sys.stdout, highlight=False, width=None if wide else 120))
    if args.json:
        write_text_atomic(args.json, to_json(report))
    if args.junit:
        write_text_atomic(args.junit, to_junit(report))
    return 0 if report.ok else EXIT_FAILED

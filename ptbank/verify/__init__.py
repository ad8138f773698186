"""Snippet verification: every code snippet runs in its own forked process against real torch.

    report = verify_bank(bank)            # VerifyReport: results, counts, ok, torch_version
    report.ok                             # nothing failed, errored, timed out or crashed

Importing this package does not import torch; a fully cached run never starts it.
"""

from .core import verify_bank
from .results import SnippetResult, Status, VerifyReport
from .runner import VerifierError

__all__ = ["SnippetResult", "Status", "VerifierError", "VerifyReport", "verify_bank"]

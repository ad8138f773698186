"""Snippet verification: every code snippet runs in its own forked process against real torch.

    report = verify_bank(bank)            # VerifyReport: results, counts, ok, torch_version
    report.ok                             # nothing failed, errored, timed out or crashed

Importing this package does not import torch; a fully cached run never starts it.

The names below load on first use: the zygote (`python -m ptbank.verify.zygote`) imports this
package too, and eager imports would make it load pydantic (0.1 s) before it even starts on
torch.
"""

import importlib

_EXPORTS = {"verify_bank": ".core", "SnippetResult": ".results", "Status": ".results",
            "VerifyReport": ".results", "VerifierError": ".launch"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)

"""The rendered-question store (render/questions.py) is pruned of what no build reads any more."""

from __future__ import annotations

import os
import time

from ptbank.render import questions


def test_entries_no_build_read_for_a_month_are_pruned_and_a_read_keeps_one(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(questions, "STORE", tmp_path)
    old, kept = "# an edited-away question\n", "# a question still in the bank\n"
    for markdown in (old, kept):
        questions._save(markdown, ("<p>asked</p>", (("Answer", "<p>body</p>"),)))
    month_ago = time.time() - 31 * 86400
    for path in tmp_path.glob("*.json"):
        os.utime(path, (month_ago, month_ago))
    assert questions._load(kept) is not None  # this build read it: it is used again
    assert questions.prune_store() == 1
    assert questions._load(kept) is not None and questions._load(old) is None

"""The verification stamp a document prints, computed from the verifier's report."""

from __future__ import annotations

from .models import Question
from .render.document import Stamp


def stamp_for(report, questions: list[Question]) -> Stamp:
    """What a document declares: how its own questions' snippets fared, under which versions.

    `report` is the verifier's VerifyReport, or None for a draft (not verified).
    """
    if report is None:
        return Stamp(0, 0, "", "", draft=True)
    requires = {(q.id, s.id): s.requires for q in questions for s in q.snippets}
    results = [r for r in report.results if (r.question_id, r.snippet_id) in requires]
    skipped_needs = tuple(", ".join(requires[(r.question_id, r.snippet_id)]) or "?"
                          for r in results if r.status.value == "skipped")
    return Stamp(passed=sum(r.status.value == "passed" for r in results), total=len(results),
                 torch=report.torch_version, python=report.python_version,
                 skipped_needs=skipped_needs)

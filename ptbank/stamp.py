"""The verification stamp a document prints, computed from the verifier's reports."""

from __future__ import annotations

from .models import Question
from .render.document import BuildStamp, Stamp


def stamp_for(reports, questions: list[Question]) -> Stamp:
    """What a document declares: how its own questions' snippets fared under each build.

    `reports` holds one VerifyReport per torch build (the pinned one first), or is None for a
    draft (not verified).
    """
    if reports is None:
        return Stamp(draft=True)
    requires = {(q.id, s.id): s.requires for q in questions for s in q.snippets}
    requires |= {(q.id, "solve"): [] for q in questions if q.params}
    return Stamp(builds=tuple(_build_stamp(report, requires) for report in reports))


def _build_stamp(report, requires: dict) -> BuildStamp:
    def source(r):  # a variant's run (`its-id@3`) counts under the snippet it is a variant of
        return r.question_id, r.snippet_id.partition("@")[0]
    results = [r for r in report.results if source(r) in requires]
    skipped_needs = tuple(tuple(requires[source(r)]) or ("?",)
                          for r in results if r.status.value == "skipped")
    recorded = [r.recorded for r in results if r.recorded]
    imported = sum(r.status.value == "passed" and bool(r.imported_from) for r in results)
    return BuildStamp(passed=sum(r.status.value == "passed" for r in results),
                      total=len(results), torch=report.torch_version,
                      python=report.python_version, skipped_needs=skipped_needs,
                      sandboxed=report.sandboxed, recorded=len(recorded),
                      recorded_on=max(recorded, default=""), imported=imported)

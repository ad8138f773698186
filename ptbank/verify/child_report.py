"""The report a child sends on its report pipe, read back as checked, clean data.

The report crosses from the snippet's own process, so it is parsed like any untrusted input:
a wrong shape or wrong types make it no report at all (the snippet then "exited before it
finished"), and every string is made encodable (a lone surrogate in an exception message must
not break the cache or the terminal table later).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ReportedWarning(_Strict):
    category: str
    types: list[str]
    message: str
    filename: str
    lineno: int | None
    count: int


class RaisedException(_Strict):
    name: str
    types: list[str]
    message: str
    line: int | None
    source: str
    origin: str
    exit_code: int | str | None


class Resident(_Strict):
    at_start: int | None
    peak: int | None


class ChildReport(_Strict):
    outcome: Literal["completed", "raised"]
    exception: RaisedException | None = None
    warnings: list[ReportedWarning]
    resident: Resident | None = None


def parse_report(text: str | None) -> dict | None:
    """The report as a plain dict, or None when there is none or it is damaged."""
    if text is None:
        return None
    try:
        report = ChildReport.model_validate(json.loads(text, object_hook=_clean_strings))
    except (ValueError, ValidationError):
        return None
    if (report.outcome == "raised") != (report.exception is not None):
        return None
    return {key: value for key, value in report.model_dump().items() if value is not None}


def clean(text: str) -> str:
    """`text` with lone surrogates written as backslash escapes, so it encodes as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean_strings(obj: dict) -> dict:
    return {key: _clean_value(value) for key, value in obj.items()}


def _clean_value(value):
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    return value

"""Content folder → Bank, reporting every problem of every file in one run.

Layout: `bank.yaml` and `topics.yaml` at the root, one question per YAML file below it
(`<topic>/<id>.yaml`). Each message names file, line and field.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .errors import ContentError, Problem, PtbankError
from .models import KEBAB, Bank, BankMeta, BankTitle, LocalizedText, Question, Snippet, Topic

BANK_FILE = "bank.yaml"
TOPICS_FILE = "topics.yaml"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KNOWN_KEYS = sorted(
    {name for model in (Question, LocalizedText, Snippet, BankMeta, BankTitle, Topic)
     for name in model.model_fields}
)

LineMap = dict[tuple, int]


def display_path(path: Path) -> str:
    """Path as users should see it: relative to the working directory when below it."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def load_bank(content: Path) -> Bank:
    """Load and validate a content folder; raise ContentError with all problems found."""
    if not content.is_dir():
        raise PtbankError(f"content folder not found: {content}")
    problems: list[Problem] = []
    meta = _load_single(content / BANK_FILE, BankMeta, problems)
    topics = _load_topics(content / TOPICS_FILE, problems)
    questions, sources, lines = [], {}, {}
    for path in sorted(p for p in content.glob("*/**/*.yaml") if p.is_file()):
        loaded = _load_model(path, Question, problems)
        if loaded is None:
            continue
        question, line_map = loaded
        shown = display_path(path)
        if question.id in sources:
            problems.append(Problem(shown, line_map.get(("id",), 1), "id",
                                    f"duplicate id {question.id!r}, "
                                    f"already used by {sources[question.id]}"))
            continue
        if topics is not None and question.topic not in topics:
            problems.append(Problem(shown, line_map.get(("topic",), 1), "topic",
                                    f"unknown topic {question.topic!r}; "
                                    f"topics.yaml has: {', '.join(topics)}"))
        problems.extend(_snippet_id_problems(question, shown, line_map))
        questions.append(question)
        sources[question.id] = shown
        lines[question.id] = line_map
    if problems or meta is None or topics is None:
        raise ContentError(problems)
    return Bank(meta=meta, topics=topics, questions=tuple(questions),
                sources=sources, lines=lines)


def _snippet_id_problems(question: Question, shown: str, line_map: LineMap) -> list[Problem]:
    seen: set[str] = set()
    found = []
    for index, snippet in enumerate(question.snippets):
        if snippet.id in seen:
            found.append(Problem(shown, line_map.get(("snippets", index, "id"), 1),
                                 f"snippets.{index}.id",
                                 f"duplicate snippet id {snippet.id!r} in this question"))
        seen.add(snippet.id)
    return found


def _load_single(path: Path, model: type[BaseModel], problems: list[Problem]):
    loaded = _load_model(path, model, problems)
    return None if loaded is None else loaded[0]


def _load_topics(path: Path, problems: list[Problem]) -> dict[str, Topic] | None:
    parsed = _parse(path, problems)
    if parsed is None:
        return None
    data, line_map = parsed
    shown = display_path(path)
    topics: dict[str, Topic] = {}
    ok = True
    for key, value in data.items():
        if not _is_kebab(key):
            ok = False
            problems.append(Problem(shown, line_map.get((key,), 1), str(key),
                                    "topic keys must be kebab-case"))
            continue
        try:
            topics[key] = Topic.model_validate(value)
        except ValidationError as exc:
            ok = False
            problems.extend(_validation_problems(exc, shown, line_map, prefix=(key,)))
    if not topics and ok:
        problems.append(Problem(shown, 1, "", "no topics defined"))
        ok = False
    return topics if ok else None


def _is_kebab(key: Any) -> bool:
    return isinstance(key, str) and re.match(KEBAB, key) is not None


def _load_model(path: Path, model: type[BaseModel], problems: list[Problem]):
    parsed = _parse(path, problems)
    if parsed is None:
        return None
    data, line_map = parsed
    try:
        return model.model_validate(data), line_map
    except ValidationError as exc:
        problems.extend(_validation_problems(exc, display_path(path), line_map))
        return None


def _parse(path: Path, problems: list[Problem]) -> tuple[dict, LineMap] | None:
    """Read one YAML file into (mapping, line map); record a problem and return None if unusable."""
    shown = display_path(path)
    if not path.is_file():
        problems.append(Problem(shown, 1, "", "file is missing"))
        return None
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(Problem(shown, line, "",
                                f"not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}; "
                                "save the file as UTF-8"))
        return None
    if not text.strip() or all(l.lstrip().startswith("#") or not l.strip()
                                for l in text.splitlines()):
        problems.append(Problem(shown, 1, "", "file is empty"))
        return None
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problems.append(Problem(shown, line, "", f"YAML syntax: {exc.problem or exc.context}"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(shown, 1, "", f"YAML: {exc}"))
        return None
    if not isinstance(node, yaml.MappingNode):
        line = node.start_mark.line + 1 if node is not None else 1
        problems.append(Problem(shown, line, "", "expected a mapping of keys to values at the top"))
        return None
    line_map: LineMap = {}
    before = len(problems)
    _map_lines(node, (), line_map, shown, problems)
    if len(problems) > before:
        return None
    data = yaml.SafeLoader("").construct_document(node)
    return data, line_map


def _map_lines(node: yaml.Node, at: tuple, line_map: LineMap, shown: str,
               problems: list[Problem]) -> None:
    """Record the 1-based line of every key and item; report duplicate keys (YAML keeps the last)."""
    line_map.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                problems.append(Problem(shown, key_node.start_mark.line + 1, _dotted(at + (key,)),
                                        "duplicate key (YAML would silently keep the last one)"))
            seen.add(key)
            line_map[at + (key,)] = key_node.start_mark.line + 1
            _map_lines(value_node, at + (key,), line_map, shown, problems)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _map_lines(item, at + (index,), line_map, shown, problems)


def _validation_problems(exc: ValidationError, shown: str, line_map: LineMap,
                         prefix: tuple = ()) -> list[Problem]:
    found = []
    for err in exc.errors(include_url=False):
        loc = prefix + tuple(err["loc"])
        line = _nearest_line(loc, line_map)
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            near = difflib.get_close_matches(str(loc[-1]), _KNOWN_KEYS, n=1)
            message = "unknown key" + (f" (did you mean {near[0]!r}?)" if near else "")
        elif err["type"] == "missing":
            message = "required but missing"
        found.append(Problem(shown, line, _dotted(loc), message))
    return found


def _nearest_line(loc: tuple, line_map: LineMap) -> int:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in line_map:
            return line_map[loc[:cut]]
    return 1


def _dotted(loc: tuple) -> str:
    return ".".join(str(part) for part in loc)

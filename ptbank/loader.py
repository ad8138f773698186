"""Content folder → Bank, reporting every problem of every file in one run.

Layout: `bank.yaml` and `topics.yaml` at the root, one question per YAML file below it
(`<topic>/<id>.yaml`). Each message names file, line and field. What is read, and how much,
is source.py's business; messages repeat a file's text only where it reads as a field name
or as a short value (errors end up in public CI logs).
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from .errors import ContentError, Problem, PtbankError
from .models import (KEBAB, SEED_ITEM, Bank, BankMeta, BankTitle, CodingSlot, LocalizedText,
                     Profile, Question, Snippet, Topic)
from .source import LOADER, check_events, content_files, read_text

BANK_FILE = "bank.yaml"
TOPICS_FILE = "topics.yaml"
PROFILES_FILE = "profiles.yaml"

_KNOWN_KEYS = sorted(
    {name for model in (Question, LocalizedText, Snippet, BankMeta, BankTitle, Topic, Profile,
                        CodingSlot)
     for name in model.model_fields}
)
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_FIELD_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}")
"""A key that may be repeated in a message: anything else is shown by its length only."""
_QUOTED_CHARS = 24
"""Characters of a value that a message quotes."""
_PATTERN_MESSAGES = {
    KEBAB: "is not kebab-case (lowercase words joined by '-', e.g. view-vs-reshape)",
    SEED_ITEM: "is not a seed item (q1..q36, task-a..task-e, bonus-1..bonus-5)",
}

LineMap = dict[tuple, int]
"""Field path → 1-based line; for a literal block (`|`), (*path, n) → its n-th text line's line."""


def display_path(path: Path) -> str:
    """Path as users should see it: relative to the working directory when below it."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.getcwd()).as_posix()
    except ValueError:
        return str(path)


def load_bank(content: Path) -> Bank:
    """Load and validate a content folder; raise ContentError with all problems found."""
    if not content.is_dir():
        raise PtbankError(f"content folder not found: {content}")
    problems: list[Problem] = []
    meta = _load_single(content / BANK_FILE, BankMeta, problems)
    topics = _load_topics(content / TOPICS_FILE, problems)
    files, links = content_files(content, display_path, (BANK_FILE, TOPICS_FILE, PROFILES_FILE))
    problems.extend(links)
    problems.extend(_misplaced_files(content, files))
    questions, sources, lines = [], {}, {}
    for path in _question_files(content, files):
        loaded = _load_model(path, Question, problems)
        if loaded is None:
            continue
        question, line_map = loaded
        shown = display_path(path)
        if question.id in sources:
            problems.append(Problem(shown, line_map[("id",)], "id",
                                    f"duplicate id {question.id!r}, "
                                    f"already used by {sources[question.id]}"))
            continue
        if topics is not None and question.topic not in topics:
            problems.append(Problem(shown, line_map[("topic",)], "topic",
                                    _unknown(f"topic {_quoted(question.topic)}", question.topic,
                                             topics)
                                    + f"; {TOPICS_FILE} has: {', '.join(topics)}"))
        else:
            problems.extend(_placement_problems(question, path.relative_to(content), shown,
                                                line_map))
        problems.extend(_snippet_id_problems(question, shown, line_map))
        questions.append(question)
        sources[question.id] = shown
        lines[question.id] = line_map
    profiles = _load_profiles(content / PROFILES_FILE, topics or {}, problems)
    if problems or meta is None or topics is None:
        raise ContentError(problems)
    return Bank(meta=meta, topics=topics, questions=tuple(questions),
                sources=sources, lines=lines, profiles=profiles)


def _question_files(content: Path, files: list[Path]) -> list[Path]:
    return [p for p in files if p.suffix == ".yaml" and p.parent != content]


def _misplaced_files(content: Path, files: list[Path]) -> list[Problem]:
    """Files the loader would otherwise skip in silence: `.yml`, or YAML beside bank.yaml."""
    found = [Problem(display_path(p), 1, "", "question files end in .yaml, not .yml")
             for p in files if p.suffix == ".yml"]
    found += [Problem(display_path(p), 1, "",
                      "question files live in a topic folder: <topic>/<id>.yaml")
              for p in files if p.suffix == ".yaml" and p.parent == content
              and p.name not in (BANK_FILE, TOPICS_FILE, PROFILES_FILE)]
    return found


def _placement_problems(question: Question, relative: Path, shown: str,
                        line_map: LineMap) -> list[Problem]:
    """A question lives at `<topic>/<id>.yaml`, so that it is found where its id says."""
    expected = f"{question.topic}/{question.id}.yaml"
    found = []
    if relative.parent.as_posix() != question.topic:
        found.append(Problem(shown, line_map[("topic",)], "topic",
                             f"the file is in {relative.parent.as_posix()}/, not in the folder "
                             f"of its topic: move it to {expected}"))
    if relative.name != f"{question.id}.yaml":
        found.append(Problem(shown, line_map[("id",)], "id",
                             f"the file is named {_quoted(relative.name)}, not after its id: "
                             f"rename it to {expected}"))
    return found


def load_topics(content: Path) -> dict[str, Topic]:
    """The topics of a content folder, in print order; raise ContentError if topics.yaml is bad."""
    problems: list[Problem] = []
    topics = _load_topics(content / TOPICS_FILE, problems)
    if topics is None:
        raise ContentError(problems)
    return topics


def _snippet_id_problems(question: Question, shown: str, line_map: LineMap) -> list[Problem]:
    seen: set[str] = set()
    found = []
    for index, snippet in enumerate(question.snippets):
        if snippet.id in seen:
            found.append(Problem(shown, line_map[("snippets", index, "id")],
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
    before = len(problems)
    for key, value in data.items():
        if not re.match(KEBAB, key):
            problems.append(Problem(shown, line_map[(key,)], _dotted((key,)),
                                    "topic keys must be kebab-case (they name folders)"))
            continue
        try:
            topics[key] = Topic.model_validate(value)
        except ValidationError as exc:
            problems.extend(_validation_problems(exc, shown, line_map, prefix=(key,)))
    if not data:
        problems.append(Problem(shown, line_map[()], "", "no topics defined"))
    return topics if len(problems) == before else None


def _load_profiles(path: Path, topics: dict[str, Topic],
                   problems: list[Problem]) -> dict[str, Profile]:
    """profiles.yaml, if present: name → Profile, each topic one of topics.yaml's."""
    if not path.exists():
        return {}
    parsed = _parse(path, problems)
    if parsed is None:
        return {}
    data, line_map = parsed
    shown = display_path(path)
    profiles: dict[str, Profile] = {}
    for name, value in data.items():
        if not re.match(KEBAB, name):
            problems.append(Problem(shown, line_map[(name,)], _dotted((name,)),
                                    "profile names must be kebab-case (`--profile NAME`)"))
            continue
        try:
            profile = Profile.model_validate(value)
        except ValidationError as exc:
            problems.extend(_validation_problems(exc, shown, line_map, prefix=(name,)))
            continue
        for topic in profile.topics:
            if topic not in topics:
                problems.append(Problem(
                    shown, line_map.get((name, "topics", topic), line_map[(name,)]),
                    f"{name}.topics.{topic}",
                    _unknown(f"topic {_quoted(topic)}", topic, topics)
                    + f"; {TOPICS_FILE} has: {', '.join(topics)}"))
        profiles[name] = profile
    if not data:
        problems.append(Problem(shown, line_map[()], "", "no profiles defined"))
    return profiles


def _load_model(path: Path, model: type[BaseModel], problems: list[Problem]):
    parsed = _parse(path, problems)
    if parsed is None:
        return None
    data, line_map = parsed
    if model is Question and not set(data) & set(Question.model_fields):
        problems.append(Problem(display_path(path), 1, "",
                                f"none of its {len(data)} keys is a field of a question "
                                "(id, topic, level, ...): is this a question file?"))
        return None
    try:
        return model.model_validate(data), line_map
    except ValidationError as exc:
        problems.extend(_validation_problems(exc, display_path(path), line_map))
        return None


def _parse(path: Path, problems: list[Problem]) -> tuple[dict, LineMap] | None:
    """Read one YAML file into (mapping with text keys, line map); None if unusable."""
    shown = display_path(path)
    text = read_text(path, shown, problems)
    if text is None or not check_events(text, shown, problems):
        return None
    try:
        node = yaml.compose(text, Loader=LOADER)
    except yaml.MarkedYAMLError as exc:
        problems.append(_syntax_problem(shown, exc))
        return None
    if not isinstance(node, yaml.MappingNode):
        line = _line(node.start_mark) if node is not None else 1
        problems.append(Problem(shown, line, "", "expected a mapping of keys to values at the top"))
        return None
    line_map: LineMap = {}
    before = len(problems)
    _map_lines(node, (), line_map, shown, problems)
    if len(problems) > before:
        return None
    try:
        return _Constructor().construct_document(node), line_map
    except yaml.MarkedYAMLError as exc:
        problems.append(Problem(shown, _line(exc.problem_mark), "",
                                f"YAML: {_capped(exc.problem)}"))
        return None


def _syntax_problem(shown: str, exc: yaml.MarkedYAMLError) -> Problem:
    """A token left open ("while scanning ...") is the culprit; otherwise where parsing stopped."""
    problem_line = _line(exc.problem_mark)
    context_line = _line(exc.context_mark) if exc.context_mark else problem_line
    scanning = (exc.context or "").startswith("while scanning")
    line = context_line if scanning else problem_line
    message = f"YAML syntax: {exc.problem}"
    if exc.context:
        message += f" ({exc.context}" + ("" if scanning else f" from line {context_line}") + ")"
    return Problem(shown, line, "", message)


def _line(mark: yaml.Mark | None) -> int:
    return mark.line + 1 if mark else 1


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor whose value errors (`!!int abc`, a 13th month) carry the node's line."""

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep)
        except ValueError as exc:
            kind = node.tag.rsplit(":", 1)[-1]
            raise yaml.constructor.ConstructorError(
                None, None, f"{_quoted(node.value)} is read as {kind} but is not a valid one "
                f"({exc}); quote it if it is text", node.start_mark) from None


def _map_lines(node: yaml.Node, at: tuple, line_map: LineMap, shown: str,
               problems: list[Problem]) -> None:
    """Record the 1-based line of every key, item and literal-block line; report keys that are
    not text or repeated (YAML keeps the last). No node is shared: aliases were refused, and
    nesting is bounded (source.check_events)."""
    line_map.setdefault(at, _line(node.start_mark))
    if isinstance(node, yaml.ScalarNode) and node.style == "|":
        for number in range(1, node.value.count("\n") + 2):
            line_map[at + (number,)] = _line(node.start_mark) + number
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _map_lines(item, at + (index,), line_map, shown, problems)
    elif isinstance(node, yaml.MappingNode):
        keys: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                _map_lines(value_node, at, line_map, shown, problems)
                continue
            if key_node.tag != _STR_TAG:
                problems.append(_not_text(shown, at, key_node))
                continue
            key = key_node.value
            if key in keys:
                problems.append(Problem(shown, _line(key_node.start_mark), _dotted(at + (key,)),
                                        "duplicate key (YAML would silently keep the last one)"
                                        if _FIELD_NAME.fullmatch(key) else
                                        f"a key of {len(key)} characters is repeated (YAML "
                                        "would silently keep the last one)"))
            keys.add(key)
            line_map[at + (key,)] = _line(key_node.start_mark)
            _map_lines(value_node, at + (key,), line_map, shown, problems)


def _not_text(shown: str, at: tuple, key_node: yaml.Node) -> Problem:
    line = _line(key_node.start_mark)
    if isinstance(key_node, yaml.ScalarNode):
        kind = key_node.tag.rsplit(":", 1)[-1]
        return Problem(shown, line, _dotted(at + (key_node.value,)),
                       f"this key is read as {_capped(kind)}, not text; quote it")
    return Problem(shown, line, _dotted(at), "a key must be text, not a list or mapping")


def _validation_problems(exc: ValidationError, shown: str, line_map: LineMap,
                         prefix: tuple = ()) -> list[Problem]:
    found = []
    for err in exc.errors(include_url=False):
        loc = prefix + tuple(err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden" and not _FIELD_NAME.fullmatch(str(loc[-1])):
            message = (f"unknown key of {len(str(loc[-1]))} characters (not shown: it does not "
                       "read as a field name)")
        elif err["type"] == "extra_forbidden":
            message = _unknown("key", str(loc[-1]), _KNOWN_KEYS)
        elif err["type"] == "missing":
            message = "required but missing"
        elif err["type"] == "value_error":
            message = _capped(str(err["ctx"]["error"]))  # its own words, less "Value error, "
        elif err["type"] == "string_pattern_mismatch":
            explained = _PATTERN_MESSAGES.get(err["ctx"]["pattern"])
            message = f"{_quoted(err['input'])} {explained}" if explained else message
        found.append(Problem(shown, _nearest_line(loc, line_map), _dotted(loc), message))
    return found


def _unknown(what: str, name: str, known) -> str:
    near = difflib.get_close_matches(name, known, n=1)
    return f"unknown {what}" + (f" (did you mean {near[0]!r}?)" if near else "")


def _nearest_line(loc: tuple, line_map: LineMap) -> int:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in line_map:
            return line_map[loc[:cut]]
    return 1


def _dotted(loc: tuple) -> str:
    """A field path as messages show it; a key that does not read as a field name is left
    out (with what follows it)."""
    shown = []
    for part in map(str, loc):
        if not _FIELD_NAME.fullmatch(part):
            break
        shown.append(part)
    return ".".join(shown)


def _quoted(value) -> str:
    """A value as a message quotes it: repr of its first _QUOTED_CHARS characters."""
    text = str(value)
    return repr(text if len(text) <= _QUOTED_CHARS else text[:_QUOTED_CHARS] + "…")


def _capped(message: str, limit: int = 160) -> str:
    """A message built from the file's text, cut short."""
    return message if len(message) <= limit else message[:limit] + "…"

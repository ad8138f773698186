"""Reading content files without trusting them: which files, how much, and what YAML may hold.

A content folder comes from a commit anyone may have written, and its errors are printed in
public CI logs. So the loader follows no symbolic link (a question file linked to /etc/shadow
would otherwise be read and its lines repeated as "unknown key" errors), reads only regular
files of bounded size, and checks the YAML event stream before anything is composed: nesting
is bounded (the composer recurses, and 200,000 nested `[` crash the interpreter) and anchors
and aliases are refused (a kilobyte of aliases expands to a million keys).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import yaml

from .errors import Problem

MAX_FILE_BYTES = 512 * 1024
"""Largest content file read; the longest question is under 50 KB."""
MAX_DEPTH = 32
"""Deepest nesting of lists and mappings in a content file; a question needs 4."""
MAX_ANCHOR_PROBLEMS = 5
"""Anchors and aliases reported per file; the rest are the same mistake again."""

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SYMLINK = ("is a symbolic link: ptbank reads only regular files inside the content folder "
           "and follows no link (copy the file in instead)")
_ANCHOR = ("YAML anchors (&name) and aliases (*name) are not allowed in content: "
           "write the value out where it is used")
_OPENING = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSING = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def content_files(content: Path, shown, by_name: tuple[str, ...] = ()
                  ) -> tuple[list[Path], list[Problem]]:
    """Every regular `*.yaml` and `*.yml` file in `content`, and a problem for each symbolic
    link found on the way (to a folder, or named as YAML), which is not followed. Links at the
    root named in `by_name` are left to read_text, which reads those files by name."""
    files, problems = [], []
    for folder, dirs, names in os.walk(content):
        here = Path(folder)
        links = [d for d in dirs if (here / d).is_symlink()]
        problems += [Problem(shown(here / d), 1, "", SYMLINK) for d in links]
        dirs[:] = sorted(set(dirs) - set(links))
        for name in names:
            path = here / name
            if path.suffix not in (".yaml", ".yml"):
                continue
            if path.is_symlink():
                if here == content and name in by_name:
                    continue
                problems.append(Problem(shown(path), 1, "", SYMLINK))
            elif path.is_file():
                files.append(path)
    return sorted(files), sorted(problems)


def read_text(path: Path, shown: str, problems: list[Problem]) -> str | None:
    """The file's text if it is a regular file (not a link), at most MAX_FILE_BYTES, UTF-8,
    printable and not empty; else record why and return None."""
    raw = _read_bytes(path, shown, problems)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(Problem(shown, line, "",
                                f"not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}; "
                                "save the file as UTF-8"))
        return None
    bad = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if bad:
        problems.append(Problem(shown, text.count("\n", 0, bad.start()) + 1, "",
                                f"character U+{ord(bad.group()):04X} is not allowed in YAML"))
        return None
    if all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()):
        problems.append(Problem(shown, 1, "", "file is empty"))
        return None
    return text


def _read_bytes(path: Path, shown: str, problems: list[Problem]) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        problems.append(Problem(shown, 1, "", "file is missing"))
        return None
    except OSError as exc:
        why = SYMLINK if exc.errno == errno.ELOOP else f"cannot read: {exc.strerror}"
        problems.append(Problem(shown, 1, "", why))
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            problems.append(Problem(shown, 1, "", f"cannot read: {os.strerror(errno.EISDIR)}"))
            return None
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem(shown, 1, "", "not a regular file"))
            return None
        if info.st_size > MAX_FILE_BYTES:
            problems.append(_too_big(shown, info.st_size))
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        problems.append(Problem(shown, 1, "", f"cannot read: {exc.strerror}"))
        return None
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:  # grew while we looked
        problems.append(_too_big(shown, len(raw)))
        return None
    return raw


def _too_big(shown: str, size: int) -> Problem:
    return Problem(shown, 1, "", f"the file has {size} bytes; content files have at most "
                                 f"{MAX_FILE_BYTES} ({MAX_FILE_BYTES // 1024} KiB)")


def check_events(text: str, shown: str, problems: list[Problem]) -> bool:
    """Whether the YAML may be composed: nesting at most MAX_DEPTH, no anchor, no alias.

    Reads the parser's event stream, which neither recurses nor expands aliases; a syntax
    error is left for the composer to report.
    """
    depth, found = 0, []
    try:
        for event in yaml.parse(text, Loader=LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                found.append(Problem(shown, event.start_mark.line + 1, "", _ANCHOR))
                if len(found) == MAX_ANCHOR_PROBLEMS:
                    break
            if isinstance(event, _OPENING):
                depth += 1
                if depth > MAX_DEPTH:
                    found.append(Problem(shown, event.start_mark.line + 1, "",
                                         f"lists and mappings are nested more than {MAX_DEPTH} "
                                         "deep here; no content needs that many"))
                    break
            elif isinstance(event, _CLOSING):
                depth -= 1
    except yaml.YAMLError:
        pass  # composing reports it, with the same parser's words
    problems.extend(found)
    return not found

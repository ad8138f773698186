"""The loader: every problem of a content folder in one run, each as `path:line: field: message`.

Fixture banks under tests/fixtures/ hold one error class each; odd inputs that need no
committed file are written into a copy of the good bank.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbank.errors import ContentError, PtbankError
from ptbank.loader import display_path, load_bank, load_topics

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path("tests/fixtures")
GOOD = FIXTURES / "good"
GOOD_QUESTION = "tensors/type-promotion.yaml"

BAD_BANKS = {
    "bad-yaml-syntax": [
        "tensors/q.yaml:16: YAML syntax: found unexpected end of stream "
        "(while scanning a quoted scalar)",
    ],
    "bad-utf8": [
        "tensors/q.yaml:16: not UTF-8: byte 0xe9 at offset 334; save the file as UTF-8",
    ],
    "bad-empty-file": ["tensors/q.yaml:1: file is empty"],
    "bad-unknown-key": [
        "tensors/q.yaml:2: level: required but missing",
        "tensors/q.yaml:5: levle: unknown key (did you mean 'level'?)",
    ],
    "bad-enum": [
        "tensors/q.yaml:5: level: Input should be 'beginner', 'intermediate' or 'advanced'",
    ],
    "bad-missing-lang": ["tensors/q.yaml:2: en: required but missing"],
    "bad-duplicate-id": [
        "tensors/q.yaml:2: id: duplicate id 'q', already used by "
        "tests/fixtures/bad-duplicate-id/autograd/q.yaml",
    ],
    "bad-unknown-topic": [
        "tensors/q.yaml:3: topic: unknown topic 'tensor' (did you mean 'tensors'?); "
        "topics.yaml has: tensors, autograd",
    ],
    "bad-alias": [
        "tensors/q.yaml:13: YAML anchors (&name) and aliases (*name) are not allowed "
        "in content: write the value out where it is used",
        "tensors/q.yaml:21: YAML anchors (&name) and aliases (*name) are not allowed "
        "in content: write the value out where it is used",
    ],
    "bad-deep-yaml": [
        "tensors/q.yaml:6: lists and mappings are nested more than 32 deep here; "
        "no content needs that many",
    ],
    "bad-kebab-id": [
        "tensors/q.yaml:2: id: 'Q_1' is not kebab-case "
        "(lowercase words joined by '-', e.g. view-vs-reshape)",
    ],
    "bad-many": [
        "autograd/a.yaml:2: minutes: required but missing",
        "autograd/a.yaml:4: kind: Input should be 'concept' or 'coding'",
        "autograd/a.yaml:6: minuts: unknown key (did you mean 'minutes'?)",
        "autograd/b.yaml:16: YAML syntax: found unexpected end of stream "
        "(while scanning a quoted scalar)",
        "bank.yaml:5: version: Input should be a valid string",
        "tensors/c.yaml:3: topic: unknown topic 'optim'; topics.yaml has: tensors, autograd",
        "tensors/d.yaml:1: file is empty",
    ],
}
"""Each bad bank → the exact messages, paths relative to the bank (the loader shows them
relative to the working directory: tests/fixtures/<bank>/...)."""


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def problems_of(content: Path) -> list[str]:
    with pytest.raises(ContentError) as caught:
        load_bank(content)
    return [str(p) for p in caught.value.problems]


def test_good_bank_loads():
    bank = load_bank(GOOD)
    assert bank.meta.version == "1.2.3"
    assert list(bank.topics) == ["tensors", "autograd"]
    assert [q.id for q in bank.questions] == [
        "linear-backward", "no-grad-vs-detach", "type-promotion"]
    assert bank.sources["type-promotion"] == f"{GOOD}/{GOOD_QUESTION}"
    assert bank.where("type-promotion", "level") == f"{GOOD}/{GOOD_QUESTION}:3"
    assert bank.where("type-promotion", "en", "rubric", 1) == f"{GOOD}/{GOOD_QUESTION}:26"


def test_literal_blocks_map_each_line_to_the_file():
    bank = load_bank(GOOD)
    # snippets[0].code starts on line 30 of type-promotion.yaml; its 4th line is line 33.
    assert bank.where("type-promotion", "snippets", 0, "code", 4).endswith(":33")


@pytest.mark.parametrize("name", sorted(BAD_BANKS))
def test_bad_bank_reports_exact_file_and_line(name):
    expected = [f"{FIXTURES}/{name}/{line}" for line in BAD_BANKS[name]]
    assert problems_of(FIXTURES / name) == expected


def test_every_bad_fixture_bank_is_tested():
    on_disk = {p.name for p in FIXTURES.glob("bad-*")}
    assert on_disk == set(BAD_BANKS)


def test_bad_utf8_fixture_really_holds_latin1():
    raw = (FIXTURES / "bad-utf8/tensors/q.yaml").read_bytes()
    assert raw.count(b"\n", 0, raw.index(b"caf\xe9")) + 1 == 16


# --- odd input in one question file ------------------------------------------------------------

def _bank_copy(tmp_path: Path) -> Path:
    content = tmp_path / "bank"
    shutil.copytree(GOOD, content)
    return content


def _question_problems(tmp_path: Path, text: str) -> list[str]:
    content = _bank_copy(tmp_path)
    (content / GOOD_QUESTION).write_text(text, encoding="utf-8")
    return [p.replace(f"{content}/", "") for p in problems_of(content)]


def _edited(old: str, new: str) -> str:
    text = (GOOD / GOOD_QUESTION).read_text("utf-8")
    assert old in text
    return text.replace(old, new, 1)


Q = GOOD_QUESTION
ODD_EDITS = {
    "number for a string": ("id: type-promotion", "id: 42",
                            f"{Q}:1: id: Input should be a valid string"),
    "string for a number": ("minutes: 2", "minutes: two",
                            f"{Q}:6: minutes: Input should be a valid integer, "
                            "unable to parse string as an integer"),
    "null value": ("  title: What dtype does an integer tensor plus a float give?", "  title:",
                   f"{Q}:18: en.title: Input should be a valid string"),
    "null section": ("en:\n", "en: ~\nxx:\n",
                     f"{Q}:17: en: Input should be a valid dictionary or instance of "
                     "LocalizedText"),
    "bool key": ("kind: concept", "yes: concept",
                 f"{Q}:4: yes: this key is read as bool, not text; quote it"),
    "int key": ("kind: concept", "1: concept",
                f"{Q}:4: 1: this key is read as int, not text; quote it"),
    "list key": ("kind: concept", "? [a, b]\n: concept",
                 f"{Q}:4: a key must be text, not a list or mapping"),
    "duplicate key": ("kind: concept", "kind: concept\nkind: coding",
                      f"{Q}:5: kind: duplicate key (YAML would silently keep the last one)"),
    "unknown tag": ("tags: [dtype]", "tags: !custom [dtype]",
                    f"{Q}:5: YAML: could not determine a constructor for the tag '!custom'"),
    "python tag": ("tags: [dtype]", "tags: !!python/object/apply:os.system [ls]",
                   f"{Q}:5: YAML: could not determine a constructor for the tag "
                   "'tag:yaml.org,2002:python/object/apply:os.system'"),
    "impossible date": ("tags: [dtype]", "tags: [2024-13-45]",
                        f"{Q}:5: YAML: '2024-13-45' is read as timestamp but is not a valid "
                        "one (month must be in 1..12); quote it if it is text"),
    "bad explicit int": ("minutes: 2", "minutes: !!int two",
                         f"{Q}:6: YAML: 'two' is read as int but is not a valid one "
                         "(invalid literal for int() with base 10: 'two'); "
                         "quote it if it is text"),
    "recursive alias": ("tags: [dtype]", "tags: &t [*t]",
                        f"{Q}:5: YAML anchors (&name) and aliases (*name) are not allowed "
                        "in content: write the value out where it is used"),
    "nested too deeply": ("tags: [dtype]", "tags: " + "[" * 5000 + "]" * 5000,
                          f"{Q}:5: lists and mappings are nested more than 32 deep here; "
                          "no content needs that many"),
    "control character": ("seed: [q2]", "seed: [q\x072]",
                          f"{Q}:7: character U+0007 is not allowed in YAML"),
    "tab indent": ("  title: 整数", "\ttitle: 整数",
                   f"{Q}:9: YAML syntax: found character that cannot start any token "
                   "(while scanning for the next token)"),
    "bad indent": ("  answer: |\n    结果", " answer: |\n    结果",
                   f"{Q}:12: YAML syntax: did not find expected key "
                   "(while parsing a block mapping from line 1)"),
    "seed item": ("seed: [q2]", "seed: [q40]",
                  f"{Q}:7: seed.0: 'q40' is not a seed item "
                  "(q1..q36, task-a..task-e, bonus-1..bonus-5)"),
    "empty rubric": ("    - 结果为 float32（默认浮点类型）\n    - 标量参与类型提升，但不会提升到 float64\n",
                     "    []\n",
                     f"{Q}:14: zh.rubric: List should have at least 1 item after validation, "
                     "not 0"),
}


@pytest.mark.parametrize("case", ODD_EDITS)
def test_odd_value_is_a_located_problem(tmp_path, case):
    old, new, expected = ODD_EDITS[case]
    assert expected in _question_problems(tmp_path, _edited(old, new))


ODD_FILES = {
    "list at the top": ("- id: q\n- topic: tensors\n",
                        [f"{Q}:1: expected a mapping of keys to values at the top"]),
    "text at the top": ("# a note\njust some text\n",
                        [f"{Q}:2: expected a mapping of keys to values at the top"]),
    "comments only": ("# TODO write this question\n\n# later\n", [f"{Q}:1: file is empty"]),
    "two documents": ("id: a\n---\nid: b\n",
                      [f"{Q}:2: YAML syntax: but found another document "
                       "(expected a single document in the stream from line 1)"]),
}


@pytest.mark.parametrize("case", ODD_FILES)
def test_odd_file_is_one_problem(tmp_path, case):
    text, expected = ODD_FILES[case]
    assert _question_problems(tmp_path, text) == expected


@pytest.mark.parametrize(("moved_to", "expected"), [
    ("tensors/other.yaml", "tensors/other.yaml:1: id: the file is named 'other.yaml', not after "
                           "its id: rename it to tensors/type-promotion.yaml"),
    ("autograd/type-promotion.yaml", "autograd/type-promotion.yaml:2: topic: the file is in "
                                     "autograd/, not in the folder of its topic: move it to "
                                     "tensors/type-promotion.yaml"),
    ("tensors/old/tensors/type-promotion.yaml",
     "tensors/old/tensors/type-promotion.yaml:2: topic: the file is in tensors/old/tensors/, not "
     "in the folder of its topic: move it to tensors/type-promotion.yaml"),
])
def test_a_question_lives_at_its_topic_and_id(tmp_path, moved_to, expected):
    content = _bank_copy(tmp_path)
    (content / moved_to).parent.mkdir(parents=True, exist_ok=True)
    (content / Q).rename(content / moved_to)
    assert [p.replace(f"{content}/", "") for p in problems_of(content)] == [expected]


# --- what the loader refuses to read, or to echo ------------------------------------------------

SECRET = "root:$6$SECRET-7f3a:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
"""Shaped like /etc/shadow: each line parses as a YAML key, which an error must not repeat."""


def ptbank(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_symbolic_links_are_refused_and_never_read(tmp_path):
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "symlink-base", content)  # good: the links are made here
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(SECRET)
    (outside / "q.yaml").write_text((content / "tensors/q.yaml").read_text("utf-8"))
    (content / "tensors/shadow.yaml").symlink_to(outside / "shadow")
    (content / "tensors/inside.yaml").symlink_to("q.yaml")  # inside, but a link all the same
    (content / "autograd").symlink_to(outside, target_is_directory=True)
    result = ptbank("lint", "--content", str(content))
    assert result.returncode == 2
    assert "SECRET" not in result.stdout + result.stderr
    link = ("is a symbolic link: ptbank reads only regular files inside the content folder "
            "and follows no link (copy the file in instead)")
    assert result.stderr.splitlines()[:-1] == [
        f"{content}/autograd:1: {link}",
        f"{content}/tensors/inside.yaml:1: {link}",
        f"{content}/tensors/shadow.yaml:1: {link}",
    ]


def test_a_symbolic_link_at_the_root_is_refused(tmp_path):
    content = _bank_copy(tmp_path)
    (tmp_path / "topics.yaml").write_bytes((content / "topics.yaml").read_bytes())
    (content / "topics.yaml").unlink()
    (content / "topics.yaml").symlink_to(tmp_path / "topics.yaml")
    assert problems_of(content) == [
        f"{content}/topics.yaml:1: is a symbolic link: ptbank reads only regular files inside "
        "the content folder and follows no link (copy the file in instead)"]


def test_a_file_that_is_no_question_is_not_repeated(tmp_path):
    content = _bank_copy(tmp_path)
    (content / "tensors/notes.yaml").write_text(SECRET)
    problems = problems_of(content)
    assert problems == [f"{content}/tensors/notes.yaml:1: none of its 2 keys is a field of a "
                        "question (id, topic, level, ...): is this a question file?"]


def test_an_unknown_key_is_named_only_when_it_reads_as_a_field_name(tmp_path):
    text = _edited("kind: concept", 'kind: concept\nlevle: x\n"root:$6$SECRET-7f3a:19000": x')
    assert _question_problems(tmp_path, text) == [
        f"{Q}:5: levle: unknown key (did you mean 'level'?)",
        f"{Q}:6: unknown key of 25 characters (not shown: it does not read as a field name)",
    ]


def test_a_value_is_quoted_short(tmp_path):
    text = _edited("id: type-promotion", "id: Type_Promotion" + "_SECRET" * 20)
    [problem] = _question_problems(tmp_path, text)
    assert problem.startswith(f"{Q}:1: id: 'Type_Promotion_SECRET_SE…' is not kebab-case")
    assert problem.count("SECRET") == 1


@pytest.mark.parametrize("command", ["lint", "build", "verify"])
def test_deep_nesting_is_refused_before_it_is_composed(tmp_path, command):
    content = _bank_copy(tmp_path)
    deep = "[" * 200_000 + "]" * 200_000
    (content / Q).write_text(_edited("tags: [dtype]", f"tags: {deep}"), encoding="utf-8")
    out = ["--out", str(tmp_path / "out"), "--draft"] if command == "build" else []
    result = ptbank(command, "--content", str(content), *out)
    assert (result.returncode, result.stderr.splitlines()[:1]) == (2, [
        f"{content}/{Q}:5: lists and mappings are nested more than 32 deep here; "
        "no content needs that many"])


def test_a_file_over_the_size_limit_is_not_read(tmp_path):
    from ptbank.source import MAX_FILE_BYTES

    content = _bank_copy(tmp_path)
    (content / "tensors/huge.yaml").write_text("# " + "x" * MAX_FILE_BYTES + "\n")
    assert problems_of(content) == [
        f"{content}/tensors/huge.yaml:1: the file has {MAX_FILE_BYTES + 3} bytes; content files "
        f"have at most {MAX_FILE_BYTES} (512 KiB)"]


BILLION_LAUGHS = "\n".join(
    ["l0: &l0 {" + ", ".join(f"k{i}: v" for i in range(10)) + "}"]
    + [f"l{n}: &l{n} {{<<: [" + ", ".join([f"*l{n - 1}"] * 10) + "]}" for n in range(1, 7)])
"""1 KB of merged aliases: a million keys once expanded (9 s and 210 MB before they were
refused)."""


def test_aliases_are_refused_before_they_expand(tmp_path):
    content = _bank_copy(tmp_path)
    (content / Q).write_text(_edited("tags: [dtype]", "tags: [dtype]\n" + BILLION_LAUGHS),
                             encoding="utf-8")
    # VmHWM, this process's own peak: ru_maxrss would carry pytest's over the fork
    peak = ("import sys; from ptbank.cli import main; rc = main(sys.argv[1:]); "
            "print(next(int(l.split()[1]) for l in open('/proc/self/status') "
            "if l.startswith('VmHWM:')) // 1024); sys.exit(rc)")
    result = subprocess.run([sys.executable, "-c", peak, "lint", "--content", str(content)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        f"{content}/{Q}:6: YAML anchors (&name) and aliases (*name) are not allowed in "
        "content: write the value out where it is used")
    assert int(result.stdout) < 120, "MiB at peak"


# --- bank.yaml and topics.yaml -----------------------------------------------------------------

TOPICS_CASES = {
    "not a mapping": ("- tensors\n- autograd\n",
                      ["topics.yaml:1: expected a mapping of keys to values at the top"]),
    "empty mapping": ("{}\n", ["topics.yaml:1: no topics defined"]),
    "key not kebab-case": ("Tensors: {zh: 张量, en: Tensors}\n",
                           ["topics.yaml:1: Tensors: topic keys must be kebab-case "
                            "(they name folders)"]),
    "null topic": ("tensors:\nautograd: {zh: 自动求导, en: Autograd}\n",
                   ["topics.yaml:1: tensors: Input should be a valid dictionary or "
                    "instance of Topic"]),
    "misspelt language": ("tensors: {zh: 张量, eng: Tensors}\nautograd: {zh: 求导, en: Autograd}\n",
                          ["topics.yaml:1: tensors.en: required but missing",
                           "topics.yaml:1: tensors.eng: unknown key (did you mean 'en'?)"]),
}


@pytest.mark.parametrize("case", TOPICS_CASES)
def test_bad_topics_file(tmp_path, case):
    text, expected = TOPICS_CASES[case]
    content = _bank_copy(tmp_path)
    (content / "topics.yaml").write_text(text, encoding="utf-8")
    assert [p.replace(f"{content}/", "") for p in problems_of(content)] == expected


@pytest.mark.parametrize("name", ["bank.yaml", "topics.yaml"])
def test_missing_root_file(tmp_path, name):
    content = _bank_copy(tmp_path)
    (content / name).unlink()
    assert problems_of(content) == [f"{content}/{name}:1: file is missing"]


def test_unreadable_root_file(tmp_path):
    content = _bank_copy(tmp_path)
    (content / "bank.yaml").unlink()
    (content / "bank.yaml").mkdir()
    assert problems_of(content) == [f"{content}/bank.yaml:1: cannot read: Is a directory"]


def test_missing_content_folder(tmp_path):
    with pytest.raises(PtbankError, match="content folder not found"):
        load_bank(tmp_path / "nowhere")


def test_load_topics_keeps_print_order():
    assert list(load_topics(GOOD)) == ["tensors", "autograd"]


def test_load_topics_reports_problems(tmp_path):
    with pytest.raises(ContentError) as caught:
        load_topics(tmp_path)
    assert [str(p) for p in caught.value.problems] == [f"{tmp_path}/topics.yaml:1: file is missing"]


def test_display_path_is_relative_below_the_working_directory(tmp_path):
    assert display_path(REPO / GOOD / "bank.yaml") == f"{GOOD}/bank.yaml"
    assert display_path(tmp_path / "x.yaml") == str(tmp_path / "x.yaml")

"""The JSON Schema for editors: generated from the models, committed as a copy in content/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ptbank.cli import main
from ptbank.models import LocalizedText, Question, Snippet
from ptbank.scaffold import SCHEMA_FILE, new_question, question_schema_json

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "content" / SCHEMA_FILE


def test_committed_schema_is_up_to_date():
    assert COMMITTED.read_text("utf-8") == question_schema_json(), (
        f"{COMMITTED.relative_to(REPO)} is out of date with ptbank/models.py: run `make schema`")


def test_schema_is_json_with_the_field_docstrings():
    schema = json.loads(question_schema_json())
    assert schema["title"] == "ptbank question"
    assert schema["additionalProperties"] is False  # editors flag unknown keys too
    properties = {
        Question: schema["properties"],
        LocalizedText: schema["$defs"]["LocalizedText"]["properties"],
        Snippet: schema["$defs"]["Snippet"]["properties"],
    }
    for model, props in properties.items():
        assert set(props) == set(model.model_fields)
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"
            assert props[name]["description"] == field.description
    assert schema["properties"]["level"] == {
        "$ref": "#/$defs/Level", "description": "beginner | intermediate | advanced."}


def test_schema_command_prints_and_writes(tmp_path, capsys):
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == question_schema_json()
    out = tmp_path / "sub" / SCHEMA_FILE
    assert main(["schema", "--out", str(out)]) == 0
    assert out.read_text("utf-8") == question_schema_json()


def test_scaffold_modeline_points_at_the_schema_of_its_content_folder(tmp_path):
    content = tmp_path / "bank"
    shutil.copytree(REPO / "tests/fixtures/good", content)
    path = new_question(content, "grad-accumulation", "autograd", "beginner", "concept")
    first = path.read_text("utf-8").splitlines()[0]
    target = first.removeprefix("# yaml-language-server: $schema=")
    assert (path.parent / target).resolve() == (content / SCHEMA_FILE).resolve()

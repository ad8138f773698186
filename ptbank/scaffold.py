"""`ptbank new` and `ptbank schema`: start a question file, describe the format to editors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .atomic import write_text_atomic
from .errors import PtbankError
from .loader import TOPICS_FILE, load_topics
from .models import KEBAB, Question

SCHEMA_FILE = "question.schema.json"
"""Generated JSON Schema kept at the root of the content folder for editors (`make schema`)."""

_TEMPLATE = """\
# yaml-language-server: $schema=../{schema}
id: {id}
topic: {topic}
level: {level}
kind: {kind}
tags: []
minutes: {minutes}
seed: []
zh:
  title: TODO 中文标题
  question: |
    TODO 问题（Markdown）
  answer: |
    TODO 参考答案（Markdown）
  rubric:
    - TODO 要点
  follow_ups: []
en:
  title: TODO English title
  question: |
    TODO the question (Markdown)
  answer: |
    TODO the reference answer (Markdown)
  rubric:
    - TODO point
  follow_ups: []
snippets:
  - id: claim
    show: answer
    code: |
      import torch
      assert torch.ones(2).sum().item() == 2.0
"""


def question_schema_json() -> str:
    schema = Question.model_json_schema()
    schema["title"] = "ptbank question"
    return json.dumps(schema, ensure_ascii=False, indent=2) + "\n"


def new_question(content: Path, qid: str, topic: str, level: str, kind: str) -> Path:
    if not re.match(KEBAB, qid):
        raise PtbankError(f"id {qid!r} is not kebab-case (e.g. view-vs-reshape)")
    topics = load_topics(content)
    if topic not in topics:
        raise PtbankError(f"unknown topic {topic!r}; {content / TOPICS_FILE} has: "
                          f"{', '.join(topics)}")
    existing = next(content.glob(f"*/**/{qid}.yaml"), None)
    if existing is not None:
        raise PtbankError(f"{existing} already exists")
    path = content / topic / f"{qid}.yaml"
    minutes = 15 if kind == "coding" else 5
    write_text_atomic(path, _TEMPLATE.format(schema=SCHEMA_FILE, id=qid, topic=topic,
                                             level=level, kind=kind, minutes=minutes))
    return path

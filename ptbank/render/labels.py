"""The words ptbank itself prints, in each language (content brings its own)."""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "zh": {
        "contents": "目录",
        "answer": "参考答案",
        "rubric": "评分要点",
        "follow_ups": "追问",
        "minutes": "{n} 分钟",
        "edition_questions": "题目版",
        "edition_answers": "参考答案版",
        "beginner": "初级",
        "intermediate": "中级",
        "advanced": "高级",
        "all": "全部难度",
        "concept": "概念题",
        "coding": "编程题",
        "version": "题库版本",
        "date": "日期",
        "raises": "运行结果：抛出 `{exc}`",
        "output": "输出：",
        "stamp": "已验证：{passed}/{total} 个代码片段在 torch {torch}、Python {python} 下通过",
        "stamp_skipped": "（{skipped} 个因需要 {needs} 而跳过）",
        "draft": "草稿：代码片段未经完整验证，请勿用于面试",
        "page": "第 {page} 页，共 {pages} 页",
        "write_here": "作答区",
        "english": "English",
        "code": "代码",
    },
    "en": {
        "contents": "Contents",
        "answer": "Reference answer",
        "rubric": "Rubric",
        "follow_ups": "Follow-up questions",
        "minutes": "{n} min",
        "edition_questions": "Questions",
        "edition_answers": "Answer key",
        "beginner": "Beginner",
        "intermediate": "Intermediate",
        "advanced": "Advanced",
        "all": "All levels",
        "concept": "Concept",
        "coding": "Coding task",
        "version": "Bank version",
        "date": "Date",
        "raises": "Result: raises `{exc}`",
        "output": "Output:",
        "stamp": "Verified: {passed}/{total} code snippets passed under torch {torch}, Python {python}",
        "stamp_skipped": " ({skipped} skipped: need {needs})",
        "draft": "DRAFT: snippets not fully verified, not for use in interviews",
        "page": "Page {page} of {pages}",
        "write_here": "Answer space",
        "english": "English",
        "code": "Code",
    },
}


def label(lang: str, key: str, **values: object) -> str:
    return LABELS[lang][key].format(**values)

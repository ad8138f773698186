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
        "stamp": "已验证：{passed}/{total} 个代码片段在 torch {torch}、{python} 下通过",
        "stamp_skipped": "（{skipped} 个因需要 {needs} 而跳过）",
        "stamp_unsandboxed": "（未在沙箱中运行）",
        "draft": "草稿：代码片段未经完整验证，请勿用于面试",
        "page": "第 {page} 页，共 {pages} 页",
        "write_here": "作答区",
        "english": "English",
        "code": "代码",
        "sheet_title": "面试题单",
        "sheet_candidate": "候选人版",
        "sheet_interviewer": "面试官版",
        "sheet_id": "题单编号",
        "candidate_name": "候选人姓名",
        "interviewer_name": "面试官",
        "total_time": "总时长：{n} 分钟（共 {count} 题）",
        "budget": "时间预算 {n} 分钟",
        "questions": "题目",
        "score_grid": "评分表",
        "number": "题号",
        "title": "题目",
        "time": "建议时间",
        "max_points": "满分",
        "score": "得分",
        "total": "合计",
        "points_note": "每项 1 分，满分 {n} 分",
        "notes": "备注",
        "regenerate": "重新生成此题单：",
        "second_round": "第二轮面试避开这些题目：",
        "verdict": "结论（录用 / 待定 / 不录用）",
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
        "stamp": "Verified: {passed}/{total} code snippets passed under torch {torch}, {python}",
        "stamp_skipped": " ({skipped} skipped: need {needs})",
        "stamp_unsandboxed": " (run without the sandbox)",
        "draft": "DRAFT: snippets not fully verified, not for use in interviews",
        "page": "Page {page} of {pages}",
        "write_here": "Answer space",
        "english": "English",
        "code": "Code",
        "sheet_title": "Interview sheet",
        "sheet_candidate": "Candidate edition",
        "sheet_interviewer": "Interviewer edition",
        "sheet_id": "Sheet ID",
        "candidate_name": "Candidate name",
        "interviewer_name": "Interviewer",
        "total_time": "Total time: {n} minutes ({count} questions)",
        "budget": "budget {n} minutes",
        "questions": "Questions",
        "score_grid": "Score grid",
        "number": "No.",
        "title": "Question",
        "time": "Minutes",
        "max_points": "Max",
        "score": "Score",
        "total": "Total",
        "points_note": "1 point each, {n} in all",
        "notes": "Notes",
        "regenerate": "Regenerate this sheet:",
        "second_round": "A second round avoids these questions with:",
        "verdict": "Verdict (hire / hold / no hire)",
    },
}


def label(lang: str, key: str, **values: object) -> str:
    return LABELS[lang][key].format(**values)


def label_in(langs: tuple[str, ...] | list[str], key: str) -> str:
    """The label in each of a document's languages: "作答区 / Answer space" when bilingual."""
    return " / ".join(label(lang, key) for lang in langs)


def page_label_parts(lang: str) -> tuple[str, str, str]:
    """"Page {page} of {pages}" → the literal text before, between and after the two numbers,
    for formats that fill the numbers in themselves (CSS counters, Word fields)."""
    before, middle, after = label(lang, "page", page="\0", pages="\0").split("\0")
    return before, middle, after

"""The words only the study site prints (navigation, search, progress), in each language; the
rest come from labels.py. `site_label` looks here first, then there, so a template asks for
any label by one name."""

from __future__ import annotations

from .labels import LABELS

SITE_LABELS: dict[str, dict[str, str]] = {
    "zh": {
        "site_lead": "{n} 道题，{m} 个主题。每道题的参考答案、评分要点和追问都折叠着："
                     "先自己回答，再展开对照。点“我会了”标记掌握的题，目录里会打勾"
                     "（只记在这个浏览器里）。",
        "site_filter": "筛选列表：标题、标签……",
        "site_search_all": "搜索题目和答案",
        "site_topics": "主题",
        "site_n_questions": "{n} 题",
        "site_known": "我会了",
        "site_progress": "已掌握 {n} / {m}",
        "site_prev": "上一题",
        "site_next": "下一题",
        "site_on_page": "本页目录",
        "site_question": "题目",
        "site_code_above": "代码见上",
        "site_tags": "标签",
        "site_all_tags": "全部标签",
        "site_tags_lead": "{n} 个标签。点一个标签，只看带这个标签的题。",
        "site_about": "关于",
        "site_about_lead": "这是 ptbank 生成的离线学习站点：整套 PyTorch 面试题库，含参考答案。"
                           "所有页面、搜索索引和脚本都在这个文件夹里，不联网也能用，"
                           "直接用浏览器打开 index.html 即可。",
        "site_verification": "代码验证",
        "site_keys": "快捷键",
        "site_keys_text": "/ 聚焦搜索框；↑ ↓ 选择搜索结果，回车打开；Esc 关闭结果。",
        "site_progress_title": "学习进度",
        "site_progress_text": "“我会了”和深色模式只保存在这个浏览器的 localStorage 里，"
                              "不会上传到任何地方。",
        "site_reset": "清除学习进度",
        "site_print": "打印",
        "site_print_text": "打印题目页时，答案、评分要点和追问都会展开，导航不会打印。",
        "site_copy": "复制",
        "site_copied": "已复制",
        "site_theme": "切换深色模式",
        "site_menu": "目录",
        "site_results": "{n} 个结果",
        "site_no_results": "没有找到匹配的题目",
        "site_root_title": "PyTorch 面试题库",
        "site_root_lead": "{n} 道 PyTorch 面试题，{m} 个主题，每题附参考答案、评分要点和追问，"
                          "代码都经过验证。选择语言：",
        "site_root_zh": "中文题目与答案",
        "site_root_en": "题目与答案均为英文",
        "site_root_bi": "每道题中英文并列",
    },
    "en": {
        "site_lead": "{n} questions in {m} topics. Each reference answer, rubric and its "
                     "follow-up questions are folded: answer for yourself first, then unfold to "
                     "check. Mark the ones you know with \u201cI know this\u201d and they are "
                     "ticked in the lists (kept in this browser only).",
        "site_filter": "Filter this list: titles, tags\u2026",
        "site_search_all": "Search questions and answers",
        "site_topics": "Topics",
        "site_n_questions": "{n} questions",
        "site_known": "I know this",
        "site_progress": "{n} of {m} known",
        "site_prev": "Previous",
        "site_next": "Next",
        "site_on_page": "On this page",
        "site_question": "Question",
        "site_code_above": "code above",
        "site_tags": "Tags",
        "site_all_tags": "All tags",
        "site_tags_lead": "{n} tags. Choose one to see only the questions that carry it.",
        "site_about": "About",
        "site_about_lead": "An offline study site made by ptbank: the whole PyTorch interview "
                           "question bank with its reference answers. Every page, the search "
                           "index and the script are in this folder; it works without a "
                           "network, straight from index.html.",
        "site_verification": "Verification",
        "site_keys": "Keyboard",
        "site_keys_text": "/ focuses the search box; \u2191 \u2193 choose a result, Enter opens "
                          "it; Esc closes the results.",
        "site_progress_title": "Progress",
        "site_progress_text": "\u201cI know this\u201d and dark mode are kept in this browser's "
                              "localStorage only; nothing is sent anywhere.",
        "site_reset": "Clear progress",
        "site_print": "Printing",
        "site_print_text": "A printed question page unfolds its answer, rubric and follow-ups "
                           "and leaves out the navigation.",
        "site_copy": "Copy",
        "site_copied": "Copied",
        "site_theme": "Toggle dark mode",
        "site_menu": "Menu",
        "site_results": "{n} results",
        "site_no_results": "No question matches",
        "site_root_title": "PyTorch interview question bank",
        "site_root_lead": "{n} PyTorch interview questions in {m} topics, each with a reference "
                          "answer, a rubric and follow-ups, its code verified. Choose a "
                          "language:",
        "site_root_zh": "questions and answers in Chinese",
        "site_root_en": "questions and answers in English",
        "site_root_bi": "Chinese and English side by side",
    },
}


def site_label(lang: str, key: str, **values: object) -> str:
    words = SITE_LABELS[lang].get(key) or LABELS[lang][key]
    if lang == "en" and values.get("n") == 1:
        for plural in ("questions", "tags", "results"):
            words = words.replace("{n} " + plural, "{n} " + plural[:-1])
    return words.format(**values)


def site_label_in(langs: tuple[str, ...] | list[str], key: str, **values: object) -> str:
    """The label in each of the site's languages: "我会了 / I know this" when bilingual."""
    return " / ".join(site_label(lang, key, **values) for lang in langs)

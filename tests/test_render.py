"""Build the render fixture bank in every format and read the artifacts back."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from docx import Document as open_docx
from pypdf import PdfReader

from ptbank.atomic import atomic_path
from ptbank.verify.facts import torch_version

from conftest import make_second_interpreter, wait_until_gone

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
EPOCH = "1764460800"  # 2025-11-30: fixed build date, so outputs are comparable


def ptbank(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("render")
    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "all",
                    "--level", "all,beginner", "--lang", "zh,en,bi", "--draft", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def pdf_text(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout


def docx_text(path: Path) -> str:
    document = open_docx(path)
    parts = [p.text for p in document.paragraphs]
    parts += [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    return "\n".join(parts)


def test_every_artifact_is_named_as_documented(built: Path):
    for level in ("all", "beginner"):
        for lang in ("zh", "en", "bi"):
            for suffix in ("", "-answers"):
                for ext in ("md", "docx", "pdf"):
                    assert (built / f"ptbank-{level}-{lang}{suffix}.{ext}").is_file()
    assert not list(built.glob("*.part")) and not list(built.glob(".*.part"))


@pytest.mark.parametrize("ext", ["md", "docx", "pdf"])
def test_answers_only_in_answer_editions(built: Path, ext: str):
    read = {"md": lambda p: p.read_text("utf-8"), "docx": docx_text, "pdf": pdf_text}[ext]
    questions = read(built / f"ptbank-all-zh.{ext}")
    answers = read(built / f"ptbank-all-zh-answers.{ext}")
    for marker in ("ZH-ANSWER-MARKER", "ZH-RUBRIC-MARKER", "ZH-FOLLOWUP-MARKER",
                   "ANSWER_SNIPPET_MARKER"):
        assert marker not in questions
        assert marker in answers
    assert "QUESTION_SNIPPET_MARKER" in questions and "QUESTION_SNIPPET_MARKER" in answers
    assert "HIDDEN_SNIPPET_MARKER" not in questions + answers


def test_level_selection_and_order(built: Path):
    beginner = (built / "ptbank-beginner-en-answers.md").read_text("utf-8")
    assert "Content is data" in beginner and "Backpropagation" not in beginner
    everything = (built / "ptbank-all-en-answers.md").read_text("utf-8")
    # topics.yaml order, then numbered within the topic
    assert everything.index("## 1. Tensors") < everything.index("## 2. Autograd")
    assert "### 2.1 Backpropagation" in everything
    assert "*Intermediate · Autograd · Concept · 4 min*" in everything


def test_bilingual_prints_chinese_then_english(built: Path):
    text = (built / "ptbank-all-bi-answers.md").read_text("utf-8")
    assert text.index("ZH-ANSWER-MARKER") < text.index("EN-ANSWER-MARKER")
    assert "渲染测试题库 / Render Test Bank" in text


def test_content_is_data_not_markup(built: Path):
    md = (built / "ptbank-all-zh.md").read_text("utf-8")
    assert '\\<script>alert("zh")\\</script>' in md      # kept as text in the Markdown ...
    assert "{{ secret }}" in md and "{% raw %}raw{% endraw %}" in md   # ... never evaluated
    pdf = pdf_text(built / "ptbank-all-zh.pdf")
    assert '<script>alert("zh")</script>' in pdf and "{{ secret }}" in pdf
    from ptbank.render.html import markdown_to_html_body
    html = markdown_to_html_body(md, ["zh"])
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_markdown_artifact_shows_raw_html_as_text(tmp_path: Path):
    """A Markdown viewer renders raw HTML: in the .md artifact, content's HTML is escaped so
    that a viewer shows it as the text it is (the other formats parse without HTML)."""
    from markdown_it import MarkdownIt

    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "md",
                    "--level", "all", "--lang", "zh,en,bi", "--draft", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    viewer = MarkdownIt("commonmark").enable("table")  # raw HTML on, as GitHub and editors
    for path in sorted(tmp_path.glob("*.md")):
        tokens = viewer.parse(path.read_text("utf-8"))
        raw = [t.content for token in tokens for t in [token, *(token.children or [])]
               if t.type in ("html_inline", "html_block")
               and not t.content.startswith("<!-- ptbank:answer-space")]
        assert raw == [], path.name
        shown = viewer.render(path.read_text("utf-8"))
        assert "<script>" not in shown and "&lt;script&gt;alert(" in shown, path.name


def test_escaping_raw_html_changes_nothing_the_other_formats_print():
    """Every format but Markdown parses without HTML, where `\\<` and `<` print alike: the
    escaped text of every question of the bank renders to the very same HTML."""
    from ptbank.loader import load_bank
    from ptbank.render.mdparse import parser
    from ptbank.render.text import escape_raw_html

    for content in (ROOT / "content", FIXTURES / "render"):
        for q in load_bank(content).questions:
            for lang in ("zh", "en"):
                text = q.text(lang)
                for markdown in (text.title, text.question, text.answer, *text.rubric,
                                 *text.follow_ups, *text.checks):
                    assert parser().render(escape_raw_html(markdown)) == \
                        parser().render(markdown), (q.id, markdown)


def test_cjk_emphasis_is_bold_everywhere(built: Path):
    md = (built / "ptbank-all-zh.md").read_text("utf-8")
    assert "**注意**：后面" in md
    from ptbank.render.html import markdown_to_html_body
    assert "<strong>注意</strong>：后面" in markdown_to_html_body(md, ["zh"])
    document = open_docx(built / "ptbank-all-zh.docx")
    runs = [r for p in document.paragraphs for r in p.runs if r.text == "注意"]
    assert runs and all(r.bold for r in runs)
    assert "**注意" not in pdf_text(built / "ptbank-all-zh.pdf")


def test_pdf_stamp_toc_fonts_and_pages(built: Path):
    path = built / "ptbank-all-zh-answers.pdf"
    reader = PdfReader(path)
    pages = [page.extract_text() for page in reader.pages]
    assert all("DRAFT" in page for page in pages), "a draft says so on every page"
    assert f"第 {len(pages)} 页，共 {len(pages)} 页" in pdf_text(path)
    assert "版本 1.2.3" in pages[0]
    toc_entry = re.search(r"^\s*2\.1 反向传播求导[ .]+(\d+)\s*$", pdf_text(path), re.M)
    assert toc_entry, "TOC entry with a page number"
    heading_page = next(n for n, page in enumerate(pages, 1)
                        if n > 2 and re.search(r"^2\.1 反向传播求导", page, re.M))
    assert int(toc_entry.group(1)) == heading_page
    fonts = {str(font) for page in reader.pages
             for font in (page["/Resources"].get("/Font") or {}).values()
             for font in [font.get_object()["/BaseFont"]]}
    assert any("NotoSansCJK" in f.replace("-", "") and "Bold" in f for f in fonts), fonts
    assert any(re.search(r"NotoSansCJK\w*SC$", f.replace("-", "")) for f in fonts), fonts


@pytest.fixture(scope="module")
def answer_spaces(tmp_path_factory) -> Path:
    """Four 10-minute questions: their boxes cannot all fit whole where their questions end."""
    out = tmp_path_factory.mktemp("answer-space")
    result = ptbank("build", "--content", str(FIXTURES / "render-answer-space"), "--format",
                    "all", "--level", "all", "--lang", "zh", "--no-answers", "--draft",
                    "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_answer_space_is_ruled_by_minutes_within_bounds():
    from ptbank.render.html import markdown_to_html_body

    def lines(minutes: int) -> int:
        md = f"### Q\n\n*meta*\n\nText.\n\n<!-- ptbank:answer-space {minutes} -->\n"
        return markdown_to_html_body(md, ["en"]).count('class="line"')

    assert (lines(1), lines(4), lines(10), lines(60)) == (3, 8, 20, 20)
    bilingual = markdown_to_html_body("<!-- ptbank:answer-space 2 -->\n", ["zh", "en"])
    assert "作答区 / Answer space" in bilingual


def test_a_coding_tasks_answer_space_is_a_numbered_grid_of_up_to_a_page():
    from ptbank.render.html import markdown_to_html_body

    def box(minutes: int) -> str:
        return markdown_to_html_body(f"<!-- ptbank:answer-space {minutes} code -->\n", ["en"])

    assert 'class="answer-space code"' in box(10)
    assert [box(m).count('class="line"') for m in (1, 10, 20, 40)] == [3, 20, 40, 40]
    numbers = re.findall(r'<span class="number">(\d+)</span>', box(20))
    assert numbers == [str(n) for n in range(1, 41)]


def test_a_question_is_never_left_at_a_page_foot_without_its_answer_space(answer_spaces: Path):
    """The box may run on to the next page, but its first lines share the question's page."""
    pages = pdf_text(answer_spaces / "ptbank-all-zh.pdf").split("\f")[:-1]
    for number in range(1, 5):
        heading = re.compile(rf"^1\.{number} 长作答第 {number} 题$", re.M)
        page = next(text for text in pages if heading.search(text))
        rest_of_question = re.split(r"^1\.\d 长作答第", heading.split(page, 1)[1], 1, re.M)[0]
        assert "作答区" in rest_of_question, f"1.{number}: its box starts on a later page"
    # each box is 16 cm: a page with two questions means the second box ran on to the next page
    assert any(len(re.findall(r"^1\.\d 长作答第", page, re.M)) == 2 for page in pages)


def test_docx_answer_space_is_ruled_rows_kept_with_the_question(answer_spaces: Path):
    document = open_docx(answer_spaces / "ptbank-all-zh.docx")
    box = document.tables[0]
    assert len(box.rows) == 20 and box.rows[0].cells[0].text == "作答区"
    keep = [row.cells[0].paragraphs[0].paragraph_format.keep_with_next for row in box.rows]
    assert keep[:2] == [True, True] and not any(keep[2:-3]), "the first rows stay together"
    assert keep[-3:] == [True, True, False], "so do the last: a box runs on by a few rows"
    body = list(document.paragraphs)
    heading = next(i for i, p in enumerate(body)
                   if p.text == "1.1 长作答第 1 题" and p.style.name == "Heading 3")
    question = body[heading:heading + 4]  # heading, meta line, two paragraphs of question
    assert question[-1].text.startswith("再说明")
    assert all(p.paragraph_format.keep_with_next for p in question)


def test_long_code_lines_wrap_not_cut(built: Path):
    text = pdf_text(built / "ptbank-all-en-answers.pdf")
    assert '"TAIL"' in text


def test_docx_styles_fonts_and_fields(built: Path):
    path = built / "ptbank-all-zh-answers.docx"
    document = open_docx(path)
    used = {p.style.name for p in document.paragraphs}
    assert {"Title", "Heading 2", "Heading 3", "PT Code", "PT Answer", "PT Rubric"} <= used
    answer = [p for p in document.paragraphs if "ZH-ANSWER-MARKER" in p.text]
    assert answer and answer[0].style.name == "PT Answer"
    heading = document.styles["Heading 3"].element.xml
    assert 'w:eastAsia="Microsoft YaHei"' in heading and "eastAsiaTheme" not in heading
    assert 'w:eastAsia="zh-CN"' in document.styles.element.xml
    body = document.element.body.xml
    assert "PAGEREF _Toc00001 \\h" in body and 'w:name="_Toc00001"' in body
    code = [p for p in document.paragraphs if p.style.name == "PT Code"]
    assert code and any(r.font.color.rgb is not None for r in code[0].runs), "highlighted"
    assert document.styles["PT Code"].paragraph_format.keep_together
    footer = document.sections[0].footer._element.xml
    assert "NUMPAGES" in footer and "PAGE" in footer


def test_same_inputs_same_bytes(built: Path, tmp_path: Path):
    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "all",
                    "--level", "all", "--lang", "zh", "--draft", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for name in ("ptbank-all-zh-answers.md", "ptbank-all-zh-answers.docx",
                 "ptbank-all-zh-answers.pdf"):
        assert (tmp_path / name).read_bytes() == (built / name).read_bytes(), name


def test_unchanged_artifacts_are_skipped(built: Path):
    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "all",
                    "--level", "all", "--lang", "zh", "--draft", "--out", str(built))
    assert result.returncode == 0, result.stderr
    assert "0 written, 6 up to date" in result.stderr


def test_a_damaged_artifact_is_rebuilt_not_taken_as_up_to_date(tmp_path: Path):
    args = ("build", "--content", str(FIXTURES / "render"), "--format", "pdf",
            "--level", "all", "--lang", "en", "--answers", "--draft", "--out", str(tmp_path))
    assert ptbank(*args).returncode == 0
    pdf = tmp_path / "ptbank-all-en-answers.pdf"
    whole = pdf.read_bytes()
    with open(pdf, "r+b") as handle:  # truncated, as by a full disk or a killed copy
        handle.truncate(100)
    result = ptbank(*args)
    assert result.returncode == 0 and "1 written, 0 up to date" in result.stderr
    assert pdf.read_bytes() == whole
    middle = len(whole) // 2
    pdf.write_bytes(whole[:middle] + bytes([whole[middle] ^ 1]) + whole[middle + 1:])  # 1 bit
    assert "1 written, 0 up to date" in ptbank(*args).stderr
    assert "0 written, 1 up to date" in ptbank(*args).stderr


BREAKOUT = (
    'TEMPLATE = """\n'
    "```\n"
    "![leak](/etc/hostname)\n"
    "**not bold**\n"
    "````\n"
    '"""\n'
    "assert TEMPLATE.count(chr(96)) == 7\n"
)
"""Snippet code holding fence-like lines in a string: everything must print as code."""


def test_code_with_backtick_fences_inside_prints_verbatim(tmp_path: Path):
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "render", content)
    question = content / "autograd" / "grad-basics.yaml"
    block = "".join(f"      {line}\n" if line else "\n" for line in BREAKOUT.splitlines())
    question.write_text(question.read_text("utf-8") + "  - id: fences-in-a-string\n"
                        "    code: |\n" + block, encoding="utf-8")
    result = ptbank("build", "--content", str(content), "--format", "all", "--level", "all",
                    "--lang", "en", "--answers", "--draft", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    from ptbank.render.mdparse import parse

    markdown = (tmp_path / "out" / "ptbank-all-en-answers.md").read_text("utf-8")
    blocks = [t.content for t in parse(markdown) if t.type == "fence"]
    assert BREAKOUT in blocks, blocks
    assert not [t for t in parse(markdown) if t.type == "inline"
                and any(c.type == "image" for c in t.children or [])]
    pdf = tmp_path / "out" / "ptbank-all-en-answers.pdf"
    assert "![leak](/etc/hostname)" in pdf_text(pdf)
    assert not any(page.images for page in PdfReader(pdf).pages)
    docx = docx_text(tmp_path / "out" / "ptbank-all-en-answers.docx")
    assert "![leak](/etc/hostname)" in docx and "**not bold**" in docx


def test_a_control_character_in_a_draft_does_not_crash_the_docx(tmp_path: Path):
    """Lint rejects it; a --draft build, which does not lint, must still not crash on it."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "render", content)
    question = content / "autograd" / "grad-basics.yaml"
    text = question.read_text("utf-8")
    title = re.search(r"^en:\n  title: (.*)$", text, re.M).group(1)
    question.write_text(text.replace(f"  title: {title}", '  title: "SOH[\\x01]"'), "utf-8")
    result = ptbank("build", "--content", str(content), "--format", "docx", "--level", "all",
                    "--lang", "en", "--answers", "--draft", "--out", str(tmp_path / "out"))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "SOH[\ufffd]" in docx_text(tmp_path / "out" / "ptbank-all-en-answers.docx")


def test_a_word_or_title_longer_than_a_line_breaks_instead_of_running_off(tmp_path: Path):
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "render", content)
    question = content / "autograd" / "grad-basics.yaml"
    text = question.read_text("utf-8")
    word, title = "x" * 5000, "T" * 600
    text = text.replace("  title: Backpropagation", f"  title: {title}")
    text = text.replace("  question: What is the gradient", f"  question: {word} What is the gradient")
    question.write_text(text, "utf-8")
    result = ptbank("build", "--content", str(content), "--format", "pdf", "--level", "all",
                    "--lang", "en", "--answers", "--draft", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    printed = pdf_text(tmp_path / "out" / "ptbank-all-en-answers.pdf")
    word_lines = [len(run) for run in re.findall(r"x{50,}", printed)]
    assert sum(word_lines) == len(word) and max(word_lines) < 120  # every character, wrapped
    title_lines = [len(run) for run in re.findall(r"T{50,}", printed)]
    assert sum(title_lines) >= len(title) and max(title_lines) < 120


def test_printing_reads_no_file_and_no_url_named_by_content(tmp_path: Path):
    """A draft is not linted: every format must still refuse what an image names."""
    import http.server
    import threading

    requests = []

    class Logged(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            requests.append(self.path)
            self.send_error(404)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Logged)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG_1PX)
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "render", content)
    question = content / "autograd" / "grad-basics.yaml"
    url = f"http://127.0.0.1:{server.server_port}/pixel.png"
    question.write_text(question.read_text("utf-8").replace(
        "  question: What is the gradient of `y = x ** 2` at `x = 3`?",
        f"  question: '![local]({secret}) ![remote]({url}) What is the gradient?'"), "utf-8")
    try:
        result = ptbank("build", "--content", str(content), "--format", "all", "--level", "all",
                        "--lang", "en", "--answers", "--draft", "--out", str(tmp_path / "out"))
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    assert requests == []
    pdf = tmp_path / "out" / "ptbank-all-en-answers.pdf"
    assert not any(page.images for page in PdfReader(pdf).pages)
    with zipfile.ZipFile(tmp_path / "out" / "ptbank-all-en-answers.docx") as docx:
        assert not [n for n in docx.namelist() if n.startswith("word/media/")]
    for printed in (pdf_text(pdf), docx_text(tmp_path / "out" / "ptbank-all-en-answers.docx")):
        assert "local" in printed and "remote" in printed  # the alt text prints, as a link


PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


WITH_CTRL_C = ("import runpy, signal, sys;"
               " signal.signal(signal.SIGINT, signal.default_int_handler);"
               " sys.argv[0] = 'ptbank'; runpy.run_module('ptbank', run_name='__main__')")
"""`python -m ptbank` as a terminal starts it: a shell starts a background job (`make test &`,
nohup in a script) with SIGINT ignored, and Python then never raises KeyboardInterrupt."""


def _start_rendering(out: Path, token: str) -> subprocess.Popen:
    """A build of a dozen PDFs in worker processes; returns once a worker is rendering."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PTBANK_SNIPPET_TOKEN": token}
    build = subprocess.Popen(
        [sys.executable, "-c", WITH_CTRL_C, "build", "--content", str(FIXTURES / "render"),
         "--format", "pdf", "--level", "all,beginner", "--lang", "zh,en,bi", "--draft",
         "--jobs", "2", "--out", str(out)],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(out.glob(".*.part")):  # a worker has begun writing a PDF
        assert build.poll() is None and time.monotonic() < deadline, "no worker started"
        time.sleep(0.05)
    return build


def test_ctrl_c_during_a_build_stops_it_whole(tmp_path: Path, process_token):
    """As a terminal's Ctrl-C: SIGINT to the whole group, workers included."""
    build = _start_rendering(tmp_path, process_token)
    interrupted = time.monotonic()
    os.killpg(build.pid, signal.SIGINT)
    try:
        stderr = build.communicate(timeout=60)[1]  # a hang fails here, rather than blocking
    finally:
        build.kill()
    print(f"Ctrl-C to exit: {time.monotonic() - interrupted:.2f} s")
    assert build.returncode == 130 and "interrupted" in stderr, stderr
    assert wait_until_gone(process_token) == []
    assert list(tmp_path.glob(".*.part")) == []


def test_a_killed_build_leaves_no_worker_and_the_next_one_cleans_up(tmp_path: Path,
                                                                     process_token):
    build = _start_rendering(tmp_path, process_token)
    os.kill(build.pid, signal.SIGKILL)  # the main process only, as the OOM killer would
    build.wait()
    assert wait_until_gone(process_token) == []  # workers die with their parent
    leftover = tmp_path / ".ptbank-all-en.pdf.x1y2z3.part"
    leftover.write_bytes(b"")  # as a build killed mid-write leaves it
    again = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "md",
                   "--level", "all", "--lang", "en", "--draft", "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert not leftover.exists() and list(tmp_path.glob(".*.part")) == []


def test_glyph_gate_names_question_and_character(tmp_path: Path):
    result = ptbank("build", "--content", str(FIXTURES / "render-glyph"), "--format", "pdf",
                    "--level", "all", "--lang", "en", "--no-answers", "--draft",
                    "--out", str(tmp_path))
    assert result.returncode == 2
    assert "U+13000" in result.stderr and "unprintable" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.glob("*.pdf")) == [] and list(tmp_path.glob(".*part")) == []


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path: Path):
    final = tmp_path / "artifact.pdf"
    final.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(final) as tmp:
            tmp.write_bytes(b"half-writ")
            raise RuntimeError("crash while rendering")
    assert final.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["artifact.pdf"]


@pytest.mark.skipif(shutil.which("soffice") is None,
                    reason="LibreOffice missing: `make test` installs libreoffice-writer-nogui")
def test_docx_opens_in_libreoffice(built: Path, tmp_path: Path):
    source = built / "ptbank-all-zh-answers.docx"
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=180)
    text = pdf_text(tmp_path / "ptbank-all-zh-answers.pdf")
    assert "渲染测试题库" in text and "ZH-ANSWER-MARKER" in text
    assert "ANSWER_SNIPPET_MARKER" in text
    fonts = subprocess.run(["pdffonts", str(tmp_path / "ptbank-all-zh-answers.pdf")],
                           capture_output=True, text=True).stdout
    assert "CJK" in fonts and "Bold" in fonts
    # the contents give each question's page, laid out by LibreOffice itself
    pages = text.split("\f")
    entry = re.search(r"^\s*2\.1 反向传播求导[ .]+(\d+)\s*$", pages[1], re.M)
    assert entry, pages[1]
    heading = next(n for n, page in enumerate(pages, 1)
                   if n > 2 and re.search(r"^\s*2\.1 反向传播求导\s*$", page, re.M))
    assert int(entry.group(1)) == heading
    # and so does a cross-reference to it: a PAGEREF field to the bookmark the contents use
    assert re.findall(r"2\.1反向传播求导（第(\d+)页）", re.sub(r"\s+", "", text)) == [str(heading)]


def test_verified_build_prints_the_stamp(tmp_path: Path):
    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "md",
                    "--level", "all", "--lang", "en", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "out" / "ptbank-all-en-answers.md").read_text("utf-8")
    pinned = re.escape(torch_version())
    assert re.search(rf"Verified: 5/5 code snippets passed under torch {pinned}", text), text[:400]
    assert "DRAFT" not in text


def test_the_stamp_names_each_missing_requirement_once_with_its_count():
    """45 skipped snippets once read "need cuda, cuda, torchao, cuda, …": each requirement is
    named once, the most common first, with how many skipped snippets need it."""
    from ptbank.render.document import BuildStamp

    stamp = BuildStamp(passed=10, total=15, torch="2.15.0", python="CPython 3.11",
                       skipped_needs=(("cuda",), ("triton", "cuda"), ("cuda",), ("gpus>=2",),
                                      ("torchao",)))
    assert stamp.line("en").endswith(
        " (5 skipped: 3 need cuda, 1 gpus>=2, 1 torchao, 1 triton)"), stamp.line("en")
    assert stamp.line("zh").endswith(
        "（跳过 5 个：需要 cuda 的 3 个，gpus>=2 的 1 个，torchao 的 1 个，triton 的 1 个）"), \
        stamp.line("zh")


def test_the_stamp_says_when_snippets_ran_without_the_sandbox(tmp_path: Path):
    result = ptbank("build", "--content", str(FIXTURES / "render"), "--format", "md",
                    "--level", "all", "--lang", "zh,en", "--answers", "--no-sandbox",
                    "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    en = (tmp_path / "out" / "ptbank-all-en-answers.md").read_text("utf-8")
    zh = (tmp_path / "out" / "ptbank-all-zh-answers.md").read_text("utf-8")
    assert re.search(r"Verified: 5/5 code snippets passed under torch [^\n]*"
                     r"\(run without the sandbox\)", en), en[:400]
    assert "（未在沙箱中运行）" in zh


def test_the_stamp_has_a_line_per_torch_build(tmp_path: Path):
    """A bank verified under the pinned torch and one more: the printed page names both."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "render", content)
    with open(content / "bank.yaml", "a", encoding="utf-8") as bank:
        bank.write('verify_also_with_torch: ["9.9.9"]\n')
    make_second_interpreter(tmp_path / "build/envs/torch-9.9.9", torch_version="9.9.9")
    done = subprocess.run([sys.executable, "-m", "ptbank", "build", "--content", str(content),
                           "--format", "pdf", "--level", "all", "--lang", "en", "--answers",
                           "--out", "out"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    assert done.returncode == 0, done.stderr
    text = " ".join(pdf_text(tmp_path / "out/ptbank-all-en-answers.pdf").split())
    for torch in (torch_version(), "9.9.9"):
        assert f"Verified: 5/5 code snippets passed under torch {torch}," in text, text[:600]


def test_build_refuses_failing_content_unless_draft(tmp_path: Path):
    args = ("build", "--content", str(FIXTURES / "render-failing"), "--format", "md",
            "--level", "all", "--lang", "en", "--out", str(tmp_path / "out"))
    refused = ptbank(*args)
    assert refused.returncode == 1
    assert "wrong-claim/two-plus-two (failed)" in refused.stderr and "--draft" in refused.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.md"))
    draft = ptbank(*args, "--draft")
    assert draft.returncode == 0, draft.stderr
    assert "DRAFT" in (tmp_path / "out" / "ptbank-all-en.md").read_text("utf-8")


def test_code_tokens_the_style_leaves_uncoloured_get_no_span():
    """Fewer boxes for WeasyPrint to lay out (peak memory, bench/render.py): names and
    punctuation print as plain text, coloured tokens keep their spans."""
    from ptbank.render.html import highlight_code

    html = highlight_code("total = compute(x, 42)  # sum\n", "python")
    assert 'class="n"' not in html and 'class="p"' not in html and 'class="w"' not in html
    assert '<span class="mi">42</span>' in html and 'class="c1"' in html
    assert re.sub(r"<[^>]+>", "", html) == "total = compute(x, 42)  # sum\n"


def test_pdf_workers_are_bounded_by_available_memory(monkeypatch):
    from ptbank import workers
    from ptbank.artifacts import Artifact

    big = [Artifact(Path(f"/tmp/{n}.pdf"), "pdf", "x" * 1_000_000, None) for n in range(4)]
    small = Artifact(Path("/tmp/s.md"), "md", "x", None)
    need = min(workers.PDF_BASE_BYTES + workers.PDF_BYTES_PER_CHAR * 1_000_000,
               workers.PDF_PEAK_BYTES_MAX)
    monkeypatch.setattr(workers, "available_memory", lambda: 24 << 30)
    assert workers.pdf_workers(big + [small], wanted=2) == 2
    assert workers.pdf_workers(big, wanted=16) == 4, "no more workers than PDFs"
    monkeypatch.setattr(workers, "available_memory",
                        lambda: workers.MEMORY_HEADROOM + 2 * need + need // 2)
    assert workers.pdf_workers(big, wanted=16) == 2
    monkeypatch.setattr(workers, "available_memory", lambda: 1 << 30)
    assert workers.pdf_workers(big, wanted=16) == 1, "always at least one"


def test_only_long_code_blocks_may_run_on_to_the_next_page():
    """A short block is kept whole; a long one kept whole left half a page blank before it."""
    from ptbank.render.html import LONG_CODE_LINES, markdown_to_html_body

    def block(lines: int) -> str:
        code = "\n".join(f"x{n} = {n}" for n in range(lines))
        return markdown_to_html_body(f"```python\n{code}\n```\n", ["en"])

    assert 'class="code highlight"' in block(LONG_CODE_LINES)
    assert 'class="code highlight long"' in block(LONG_CODE_LINES + 2)
    css = (Path(__file__).resolve().parents[1] / "templates" / "print.css").read_text("utf-8")
    assert re.search(r"pre\.code\.long \{ break-inside: auto;", css)


def test_an_answer_box_runs_on_to_the_next_page_by_a_few_lines_never_one():
    """Wherever the page ends, a box cut in two keeps at least ANSWER_LINES_KEPT lines on
    each side (a box one line over left a sliver at the top of the next page)."""
    from weasyprint import HTML

    from ptbank.render.document import Document
    from ptbank.render.html import markdown_to_html_body, print_page
    from ptbank.render.mdparse import ANSWER_LINES_KEPT
    from ptbank.stamp import Stamp

    doc = Document(title="T", subtitle="", langs=("en",), answers=False, stamp=Stamp(draft=True),
                   version="1", date="2025-11-30", sections=[])
    cut_boxes = 0
    for filler in range(6, 30):
        md = "".join(f"Line {n} of filler.\n\n" for n in range(filler))
        md += "### Q\n\n*meta*\n\nText.\n\n<!-- ptbank:answer-space 10 -->\n"
        pages = HTML(string=print_page(markdown_to_html_body(md, ["en"]), doc)).render().pages
        per_page = [sum(1 for box in _descendants(page._page_box)
                        if getattr(box, "element", None) is not None
                        and box.element.get("class") == "line"
                        and type(box).__name__ == "BlockBox")
                    for page in pages]
        lines_on = [n for n in per_page if n]
        assert sum(lines_on) == 20
        if len(lines_on) > 1:
            cut_boxes += 1
            assert min(lines_on) >= ANSWER_LINES_KEPT, (filler, per_page)
    assert cut_boxes >= 3, "some filler lengths must cut the box"


def _descendants(box):
    yield box
    for child in getattr(box, "children", ()):
        yield from _descendants(child)


def test_two_snippets_in_a_row_are_two_boxes_in_the_docx(tmp_path: Path):
    """Word draws adjacent paragraphs with the same border as one box: two snippets printed
    one after the other must be kept apart, or a verdict below them reads as both's."""
    from ptbank.render.document import Document
    from ptbank.render.docx import render_docx
    from ptbank.render.docx_styles import CODE
    from ptbank.stamp import Stamp

    doc = Document(title="T", subtitle="", langs=("en",), answers=True, stamp=Stamp(draft=True),
                   version="1", date="2025-11-30", sections=[])
    md = ("Text.\n\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n\n"
          "*Raises `RuntimeError`.*\n\n```python\nz = 3\n```\n")
    render_docx(md, doc, tmp_path / "t.docx")
    styles = [p.style.name for p in open_docx(tmp_path / "t.docx").paragraphs]
    code = [i for i, name in enumerate(styles) if name == CODE]
    assert len(code) == 3, styles
    assert all(b - a > 1 for a, b in zip(code, code[1:])), styles


def test_a_page_that_opens_inside_a_long_code_block_says_the_code_continues(tmp_path):
    """A 90-line snippet runs over two or three pages: each page after its first says in its
    header that the code goes on from the page before; no other page says so."""
    content = tmp_path / "bank"
    shutil.copytree(FIXTURES / "render", content)
    code = "".join(f"      line_{i:03d} = {i}\n" for i in range(90))
    (content / "tensors" / "very-long-code.yaml").write_text(
        "id: very-long-code\ntopic: tensors\nlevel: beginner\nminutes: 3\n"
        "zh: {title: 很长的代码, question: 读这段代码。, answer: 见代码。, rubric: [读完]}\n"
        "en: {title: Very long code, question: Read this code., answer: See the code.,"
        " rubric: [reads it]}\n"
        "snippets:\n  - id: many-lines\n    code: |\n" + code
        + "      assert line_089 == 89\n", encoding="utf-8")
    out = tmp_path / "out"
    result = ptbank("build", "--content", str(content), "--format", "pdf", "--level",
                    "beginner", "--lang", "zh,en", "--answers", "--draft", "--out", str(out))
    assert result.returncode == 0, result.stderr
    for lang, mark in (("en", "(code continued)"), ("zh", "（代码接上页）")):
        pages = pdf_text(out / f"ptbank-beginner-{lang}-answers.pdf").split("\f")
        marked = [n for n, page in enumerate(pages) if mark in page.split("\n", 2)[0]]
        holding = [n for n, page in enumerate(pages) if "line_" in page]
        assert len(holding) >= 2, "the fixture's code runs over pages"
        assert marked == holding[1:], (lang, marked, holding)


def test_the_coding_grid_leaves_its_label_unruled(tmp_path):
    """The questions-only edition gives a coding task a grid to write on; the grid's vertical
    lines stop at its label "Answer space" rather than run through its letters."""
    from PIL import Image

    out = tmp_path / "out"
    result = ptbank("build", "--content", str(FIXTURES / "grade" / "content"), "--format", "pdf",
                    "--lang", "en", "--no-answers", "--draft", "--out", str(out))
    assert result.returncode == 0, result.stderr
    pdf = next(out.glob("*.pdf"))
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout
    pages = boxes.split("<page ")[1:]
    page, found = next((n, m) for n, text in enumerate(pages, 1) if (m := re.search(
        r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">Answer</word>\s*'
        r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>space</word>', text)))
    x0, y0, y1, x1 = (float(v) * 150 / 72 for v in found.groups())   # points to 150 dpi
    subprocess.run(["pdftoppm", "-png", "-r", "150", "-f", str(page), "-l", str(page),
                    "-x", str(int(x0)), "-y", str(int(y0)), "-W", str(int(x1 - x0)),
                    "-H", str(int(y1 - y0)), str(pdf), str(tmp_path / "label")], check=True)
    label = Image.open(next(tmp_path.glob("label*.png"))).convert("L")
    width, height = label.size
    ruled = [x for x in range(width)
             if all(label.getpixel((x, y)) < 250 for y in range(height))]
    assert width > 40 and not ruled, f"grid lines through the label at columns {ruled}"


def test_a_contents_entry_that_wraps_hangs_under_its_title(tmp_path):
    content = tmp_path / "bank"
    shutil.copytree(FIXTURES / "render", content)
    title = "A title long enough to wrap " + " ".join(f"word{i}" for i in range(24))
    path = content / "tensors" / "long-code.yaml"
    text = path.read_text("utf-8")
    path.write_text(text.replace("title: Long code lines wrap instead of being cut off",
                                 f"title: {title} WRAPEND"), encoding="utf-8")
    out = tmp_path / "out"
    result = ptbank("build", "--content", str(content), "--format", "pdf", "--lang", "en",
                    "--no-answers", "--draft", "--out", str(out))
    assert result.returncode == 0, result.stderr
    boxes = subprocess.run(["pdftotext", "-bbox", str(next(out.glob("*.pdf"))), "-"],
                           capture_output=True, text=True, check=True).stdout
    contents = next(page for page in boxes.split("<page ") if ">Contents</word>" in page)
    words = re.findall(r'xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]+)</word>', contents)
    number = next((float(x), float(y)) for x, y, w in words if w == "1.2")
    first = next(float(x) for x, y, w in words if w == "A" and float(y) == number[1])
    below = sorted((float(y), float(x)) for x, y, w in words if float(y) > number[1] + 1
                   and float(y) < number[1] + 30)
    assert below, "the entry wraps"
    # under the title, give or take the width of a longer number ("12.15"), not the number
    assert below[0][1] > number[0] + 10 and abs(below[0][1] - first) < 6, (number, first, below)

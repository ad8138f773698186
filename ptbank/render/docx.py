"""Markdown → DOCX with python-docx, walking the same markdown-it tokens the PDF uses.

Which named style a paragraph gets follows the document's structure: paragraphs after the
"Reference answer" heading are answers, after "Rubric" rubric points, and so on.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote

from docx import Document as new_docx
from docx.enum.table import WD_ROW_HEIGHT_RULE
from docx.enum.text import WD_BREAK, WD_TAB_ALIGNMENT, WD_TAB_LEADER
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Cm, Pt, RGBColor
from docx.text.paragraph import Paragraph
from markdown_it.token import Token
from pygments import lex
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound

from . import docx_styles as S
from .document import Document
from .html import PYGMENTS_STYLE
from .labels import LABELS, label_in, page_label_parts, page_ref_parts
from .mdparse import (ANSWER_LINE_CM, ANSWER_LINES_KEPT, ANSWER_SPACE, CODE_LINE_CM,
                      answer_space_lines, is_task_checkbox, parse, top_level_blocks)
from .text import heading_anchor, inline_text, softbreak_joiner, title_language

CHECKBOX = "☐ "
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
"""Characters an XML 1.0 document cannot contain."""
TEXT_WIDTH_CM = 17.4
"""A4 width less the margins set in docx_styles.setup_page."""
SHORT_CELL = 12
"""Cells this wide or narrower (in _display_width columns) are never wrapped."""
CELL_UNIT_CM = 0.21
"""About one Latin character of table text (9 pt) in the widest face it may print in: DejaVu
Sans, which LibreOffice substitutes here (0.18 wrapped "Minutes" and "Weight" headers)."""
CELL_PADDING = 4
"""Units (CELL_UNIT_CM) of a cell's left and right padding together, with room for a bold
header a little wider than its text ("Score" wrapped to "Scor|e" under LibreOffice at 3)."""


def render_docx(markdown: str, doc: Document, target: Path) -> None:
    """Write the DOCX of `markdown`; the same inputs give the same bytes.

    Characters XML cannot hold (lint rejects them in content; a draft may still carry one)
    print as U+FFFD instead of failing the build.
    """
    markdown = xml_text(markdown)
    doc = replace(doc, title=xml_text(doc.title), subtitle=xml_text(doc.subtitle))
    document = new_docx()
    S.setup_styles(document)
    S.setup_page(document)
    _page_furniture(document, doc)
    _Writer(document, doc).write(parse(markdown))
    _fix_core_properties(document, doc)
    buffer = io.BytesIO()
    document.save(buffer)
    target.write_bytes(_normalized_zip(buffer.getvalue()))


class _Writer:
    """Walks top-level token blocks and appends paragraphs with the right named style."""

    def __init__(self, document, doc: Document):
        self.document = document
        self.doc = doc
        self.part_style = S.BODY
        self.parts = {LABELS[lang][key]: style for lang in LABELS for key, style in
                      (("answer", S.ANSWER), ("rubric", S.RUBRIC),
                       ("follow_ups", S.FOLLOW_UP))}
        self.contents_titles = {LABELS[lang]["contents"] for lang in LABELS}
        self.next_list_is_toc = False
        self.topic_headings = 0
        self.question_heading: Paragraph | None = None
        self.toc_bookmarks: dict[str, str] = {}
        """Anchor of a heading the contents list → the bookmark its page number refers to."""
        self.slugs: dict[str, int] = {}

    def write(self, tokens: list[Token]) -> None:
        blocks = top_level_blocks(tokens)
        for index, block in enumerate(blocks):
            self._block(block, previous=blocks[index - 1][0] if index else None)

    def _block(self, block: list[Token], previous: Token | None) -> None:
        head = block[0]
        kind = head.type
        if kind == "heading_open":
            self._heading(head, block[1])
        elif kind == "paragraph_open":
            self._paragraph(block[1], previous)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            if self.next_list_is_toc:
                self._toc(block)
            else:
                self._list(block, depth=0)
        elif kind == "fence":
            if previous is not None and previous.type == "fence":
                self._box_gap()
            self._code(head.content, head.info.strip())
        elif kind == "blockquote_open":
            for token in block:
                if token.type == "inline":
                    self._inline(self.document.add_paragraph(style=S.STAMP), token.children)
        elif kind == "table_open":
            self._table(block)
        elif kind == ANSWER_SPACE:
            self._answer_space(head.meta["minutes"], head.meta["code"],
                               head.meta.get("notes", False))
        elif kind == "hr":
            self.document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)

    def _heading(self, head: Token, inline: Token) -> None:
        level = int(head.tag[1])
        self.next_list_is_toc = inline.content in self.contents_titles
        if level == 1:
            self._inline(self.document.add_paragraph(style=S.TITLE), inline.children)
            return
        if level <= 3:
            self.part_style = S.BODY
        else:
            self.part_style = self.parts.get(inline.content, S.BODY)
        style = S.HEADINGS[level]
        paragraph = self.document.add_paragraph(style=style)
        self.question_heading = paragraph if level == 3 else None
        if self.next_list_is_toc:
            paragraph.paragraph_format.page_break_before = True
        elif level == 2 and self.doc.kind == "sheet":
            # a sheet flows on; only the interviewer's questions (after the score grid) start
            # a new page, as in the print CSS
            self.topic_headings += 1
            paragraph.paragraph_format.page_break_before = self.topic_headings == 2
        self._inline(paragraph, inline.children)
        if level in (2, 3):
            self._bookmark(paragraph, inline)

    def _paragraph(self, inline: Token, previous: Token | None) -> None:
        after_heading = previous.tag if previous is not None and \
            previous.type == "heading_open" else None
        bilingual_title = _is_bilingual_title(inline)
        if after_heading == "h1":
            style = S.SUBTITLE
        elif after_heading == "h3":
            style = S.META  # the level · topic · minutes line under a question
        else:
            style = S.BODY if bilingual_title else self.part_style
        paragraph = self.document.add_paragraph(style=style)
        paragraph.paragraph_format.keep_with_next = style in (S.META, S.SUBTITLE) or \
            bilingual_title
        self._inline(paragraph, inline.children)

    def _list(self, block: list[Token], depth: int) -> None:
        ordered = block[0].type == "ordered_list_open"
        number = int(block[0].attrs.get("start", 1)) if ordered else 1
        i = 1
        while i < len(block) - 1:
            token = block[i]
            if token.type == "list_item_open":
                end = _matching_close(block, i)
                self._list_item(block[i + 1:end], depth, f"{number}. " if ordered else "• ")
                number += 1
                i = end + 1
            else:
                i += 1

    def _list_item(self, tokens: list[Token], depth: int, marker: str) -> None:
        style = self.part_style if self.part_style != S.BODY else S.LIST
        first = True
        for block in top_level_blocks(tokens):
            head = block[0]
            if head.type == "paragraph_open":
                paragraph = self.document.add_paragraph(style=style)
                paragraph.paragraph_format.left_indent = Cm(0.9 + 0.6 * depth)
                children = block[1].children or []
                if first:
                    is_task = bool(children) and is_task_checkbox(children[0])
                    paragraph.add_run(CHECKBOX if is_task else marker)
                self._inline(paragraph, children)
                first = False
            elif head.type in ("bullet_list_open", "ordered_list_open"):
                self._list(block, depth + 1)
            elif head.type == "fence":
                self._code(head.content, head.info.strip())

    def _toc(self, block: list[Token]) -> None:
        """The contents in Word's TOC styles, each entry's page number a PAGEREF field to a
        bookmark on its heading, which Word recomputes on open (the field is marked dirty)
        and LibreOffice lays out live. Not a TOC field: LibreOffice shows a TOC field's
        cached text, without numbers, until the reader updates it by hand."""
        self.next_list_is_toc = False
        self.topic_headings = 0
        self.question_heading: Paragraph | None = None
        entries = [t for t in block if t.type == "inline"]
        section = self.document.sections[0]
        width = section.page_width - section.left_margin - section.right_margin
        for number, entry in enumerate(entries, 1):
            paragraph = self.document.add_paragraph(
                style=S.TOC_LEVELS[1 if entry.level <= 3 else 2])
            paragraph.paragraph_format.tab_stops.add_tab_stop(
                width, WD_TAB_ALIGNMENT.RIGHT, WD_TAB_LEADER.DOTS)
            paragraph.add_run(inline_text(entry.content))
            href = next((c.attrGet("href") for c in entry.children or []
                         if c.type == "link_open"), None)
            if href and href.startswith("#"):
                bookmark = self.toc_bookmarks[unquote(href[1:])] = f"_Toc{number:05d}"
                paragraph.add_run("\t")
                _add_field(paragraph, rf"PAGEREF {bookmark} \h", "")

    def _page_ref(self, paragraph, target: str, text: list[str]) -> None:
        """After a cross-reference, its target's page: " (p. 152)" as a PAGEREF field to the
        bookmark on the target's heading (a document with contents has one on each)."""
        bookmark = self.toc_bookmarks.get(target)
        if bookmark is None:
            return
        before, after = page_ref_parts(title_language("".join(text)))
        paragraph.add_run(before)
        _add_field(paragraph, rf"PAGEREF {bookmark} \h", "")
        if after:
            paragraph.add_run(after)

    def _bookmark(self, paragraph: Paragraph, inline: Token) -> None:
        """Mark a heading the contents list, under the name its PAGEREF asks for, found by
        the heading's anchor (text.heading_anchor, as the HTML of every format names it)."""
        name = self.toc_bookmarks.get(
            heading_anchor("".join(c.content for c in inline.children or []), self.slugs))
        if name is None:
            return
        start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
        start.set(qn("w:id"), name[4:].lstrip("0") or "0")
        start.set(qn("w:name"), name)
        end.set(qn("w:id"), start.get(qn("w:id")))
        position = 1 if paragraph._p.pPr is not None else 0
        paragraph._p.insert(position, start)
        paragraph._p.append(end)

    def _box_gap(self) -> None:
        """An empty line between two code boxes: Word draws adjacent paragraphs with the same
        border as one box."""
        gap = self.document.add_paragraph()
        gap.paragraph_format.space_before = gap.paragraph_format.space_after = Pt(0)
        gap.paragraph_format.line_spacing = Pt(4)

    def _code(self, code: str, language: str) -> None:
        paragraph = self.document.add_paragraph(style=S.CODE)
        try:
            lexer = get_lexer_by_name(language or "text")
        except ClassNotFound:
            lexer = get_lexer_by_name("text")
        style = get_style_by_name(PYGMENTS_STYLE)
        for token_type, value in lex(code.rstrip("\n"), lexer):
            look = style.style_for_token(token_type)
            for n, piece in enumerate(value.split("\n")):
                if n:
                    paragraph.add_run().add_break(WD_BREAK.LINE)
                if piece:
                    run = paragraph.add_run(piece)
                    if look["color"]:
                        run.font.color.rgb = RGBColor.from_string(look["color"])
                    run.font.bold = look["bold"] or None
                    run.font.italic = look["italic"] or None

    def _table(self, block: list[Token]) -> None:
        rows: list[list[Token]] = []
        for token in block:
            if token.type == "tr_open":
                rows.append([])
            elif token.type == "inline":
                rows[-1].append(token)
        table = self.document.add_table(rows=len(rows), cols=max(map(len, rows)))
        table.style = "Table Grid"
        for r, cells in enumerate(rows):
            for c, inline in enumerate(cells):
                paragraph = table.cell(r, c).paragraphs[0]
                self._inline(paragraph, inline.children)
                if r == 0:
                    for run in paragraph.runs:
                        run.font.bold = True
            if r and not "".join(inline_text(cell.content) for cell in cells).strip():
                table.rows[r].height = Cm(0.9)  # a blank row is a field to write in
        _fit_columns(table, rows)

    def _answer_space(self, minutes: int, code: bool = False, notes: bool = False) -> None:
        """Ruled rows in a box. The question and the first rows keep together, and so do the
        last rows; the box may run on to the next page between them (an empty one-row box
        would move whole and strand the question).
        A coding task's rows are closer and numbered, in the code font."""
        self._keep_question_with_next()
        rows = answer_space_lines(minutes, code)
        table = self.document.add_table(rows=rows, cols=1)
        _ruled_box(table)
        for number, row in enumerate(table.rows):
            row.height = Cm(CODE_LINE_CM if code else ANSWER_LINE_CM)
            row.height_rule = WD_ROW_HEIGHT_RULE.EXACTLY
            paragraph = row.cells[0].paragraphs[0]
            paragraph.style = self.document.styles[S.ANSWER_SPACE]
            paragraph.paragraph_format.keep_with_next = (  # the first rows, and the last
                number < ANSWER_LINES_KEPT - 1 or rows - ANSWER_LINES_KEPT <= number < rows - 1)
            if code:
                numeral = paragraph.add_run(f"{number + 1:>2}  ")
                numeral.font.name = S.CODE_FONT
        table.rows[0].cells[0].paragraphs[0].add_run(
            label_in(self.doc.langs, "notes" if notes else "write_here"))
        self.document.add_paragraph()

    def _keep_question_with_next(self) -> None:
        """Keep every paragraph from the question's heading on with what follows."""
        if self.question_heading is None:
            return
        heading = self.question_heading._p
        for element in (heading, *heading.itersiblings()):
            paragraphs = [element] if element.tag == qn("w:p") else element.iter(qn("w:p"))
            for p in paragraphs:
                Paragraph(p, self.question_heading._parent).paragraph_format.keep_with_next = True

    def _inline(self, paragraph, children: list[Token] | None) -> None:
        bold = italic = strike = False
        children = children or []
        reference = None  # the cross-reference being written: (its target's anchor, its text)
        for i, token in enumerate(children):
            kind = token.type
            if kind == "link_open" and token.attrGet("title"):  # markdown.py's cross-reference
                reference = (unquote(str(token.attrGet("href") or "")[1:]), [])
            elif kind == "link_close" and reference is not None:
                self._page_ref(paragraph, *reference)
                reference = None
            elif reference is not None and kind in ("text", "code_inline"):
                reference[1].append(token.content)
            if kind == "strong_open" or kind == "strong_close":
                bold = kind == "strong_open"
            elif kind == "em_open" or kind == "em_close":
                italic = kind == "em_open"
            elif kind == "s_open" or kind == "s_close":
                strike = kind == "s_open"
            elif kind in ("text", "code_inline", "softbreak", "hardbreak"):
                if kind == "hardbreak":
                    paragraph.add_run().add_break(WD_BREAK.LINE)
                    continue
                text = token.content if kind != "softbreak" else softbreak_joiner(
                    children[i - 1].content if i else "",
                    children[i + 1].content if i + 1 < len(children) else "")
                if not text:
                    continue
                run = paragraph.add_run(text)
                run.font.bold = bold or None
                run.font.italic = italic or None
                run.font.strike = strike or None
                if kind == "code_inline":
                    S.set_fonts(run._element, S.CODE_FONT, S.CJK_FONT)
                    run.font.size = Pt(9)
                    run.font.color.rgb = RGBColor(0x80, 0x1F, 0x1F)


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _fit_columns(table, rows: list[list[Token]]) -> None:
    """Share the text width by the longest cell of each column (Word's default is equal),
    after giving every column room for its short cells whole: "题号", "10 分钟" or "19 %"
    on one line, not one character a line."""
    texts = [[row[c].content if c < len(row) else "" for row in rows]
             for c in range(len(table.columns))]
    longest = [max(_display_width(t) for t in column) + 4 for column in texts]
    least = [max([_display_width(t) for t in column if _display_width(t) <= SHORT_CELL] + [0])
             + CELL_PADDING for column in texts]
    room = TEXT_WIDTH_CM / CELL_UNIT_CM - sum(least)
    spare = [max(0, big - small) for big, small in zip(longest, least)]
    if room <= 0 or not sum(spare):
        shares = [big / sum(longest) for big in longest]
    else:
        shares = [(small + room * extra / sum(spare)) * CELL_UNIT_CM / TEXT_WIDTH_CM
                  for small, extra in zip(least, spare)]
    table.autofit = False
    for c, column in enumerate(table.columns):
        width = Cm(TEXT_WIDTH_CM * shares[c])
        column.width = width  # the grid, which LibreOffice reads
        for cell in column.cells:  # the cells, which Word reads
            cell.width = width


def _display_width(text: str) -> int:
    """Columns `text` takes in a table cell: a CJK character two, anything else one."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _ruled_box(table) -> None:
    """A grey box with light lines between its rows and none between columns."""
    borders = OxmlElement("w:tblBorders")
    for edge, size, color in (("top", 5, "999999"), ("left", 5, "999999"),
                              ("bottom", 5, "999999"), ("right", 5, "999999"),
                              ("insideH", 3, "DCDCDC")):
        line = OxmlElement(f"w:{edge}")
        for key, value in (("val", "single"), ("sz", str(size)), ("space", "0"),
                           ("color", color)):
            line.set(qn(f"w:{key}"), value)
        borders.append(line)
    table._tbl.tblPr.append(borders)


def _is_bilingual_title(inline: Token) -> bool:
    children = inline.children or []
    return len(children) == 3 and children[0].type == "strong_open" and \
        children[-1].type == "strong_close" and children[1].content[:1].isdigit()


def _matching_close(tokens: list[Token], start: int) -> int:
    depth = 0
    for i in range(start, len(tokens)):
        depth += tokens[i].nesting
        if depth == 0:
            return i
    return len(tokens) - 1


def _run_with(*children):
    run = OxmlElement("w:r")
    for child in children:
        run.append(child)
    return run


def _field_char(kind: str):
    element = OxmlElement("w:fldChar")
    element.set(qn("w:fldCharType"), kind)
    if kind == "begin":
        element.set(qn("w:dirty"), "true")  # ask Word to recompute the field on open
    return element


def _field_start(instruction: str) -> list:
    """The runs that open a field: begin, instruction, separate (the cached result follows)."""
    instr = OxmlElement("w:instrText")
    instr.set(qn("xml:space"), "preserve")
    instr.text = f" {instruction} "
    return [_run_with(_field_char("begin")), _run_with(instr), _run_with(_field_char("separate"))]


def _add_field(paragraph, instruction: str, placeholder: str) -> None:
    text = OxmlElement("w:t")
    text.text = placeholder
    for run in (*_field_start(instruction), _run_with(text), _run_with(_field_char("end"))):
        paragraph._p.append(run)


def _page_furniture(document, doc: Document) -> None:
    """Header with the bank title (and DRAFT), footer with "Page X of Y" as live fields."""
    section = document.sections[0]
    section.different_first_page_header_footer = True
    header = section.header.paragraphs[0]
    header.add_run(doc.title).font.size = Pt(8)
    if doc.draft:
        mark = header.add_run("    DRAFT")
        mark.font.bold = True
        mark.font.color.rgb = RGBColor(0xCC, 0, 0)
        first = section.first_page_header.paragraphs[0].add_run("DRAFT")
        first.font.bold = True
        first.font.color.rgb = RGBColor(0xCC, 0, 0)
    for footer in (section.footer, section.first_page_footer):
        paragraph = footer.paragraphs[0]
        paragraph.alignment = 1  # centre
        before, middle, after = page_label_parts(doc.langs[0])
        paragraph.add_run(before)
        _add_field(paragraph, "PAGE", "1")
        paragraph.add_run(middle)
        _add_field(paragraph, "NUMPAGES", "1")
        paragraph.add_run(after)


def _fix_core_properties(document, doc: Document) -> None:
    when = datetime.fromisoformat(doc.date).replace(tzinfo=timezone.utc)
    props = document.core_properties
    props.title = doc.title
    props.subject = doc.subtitle
    props.author = props.last_modified_by = "ptbank"
    props.created = props.modified = props.last_printed = when
    props.revision = 1
    props.language = "zh-CN" if doc.langs[0] == "zh" else "en-US"


def _normalized_zip(data: bytes) -> bytes:
    """Rewrite the package with fixed member timestamps so equal inputs give equal bytes."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, source.read(info.filename))
    return out.getvalue()

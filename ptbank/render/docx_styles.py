"""DOCX settings: the named styles a company can restyle in Word, fonts, page furniture.

python-docx's default template gives headings theme fonts that override any East Asian font
and declares `eastAsia="en-US"`; every style here names its fonts explicitly (ascii, hAnsi,
eastAsia), drops the theme attributes and declares Chinese as the East Asian language.
Fonts are not embedded: the names are ones Word users have; LibreOffice/fontconfig substitute
(Noto CJK here).
"""

from __future__ import annotations

from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_LINE_SPACING
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Cm, Pt, RGBColor

LATIN_FONT = "Calibri"
CJK_FONT = "Microsoft YaHei"
CODE_FONT = "Consolas"
BODY_SIZE = Pt(10.5)
CODE_SIZE = Pt(9)
ACCENT = RGBColor(0x22, 0x33, 0x44)
CODE_SHADING = "F6F8FA"
CODE_BORDER = "D8DEE4"

# Named styles (Word's own names where Word has one, so "restyle Heading 3" just works).
TITLE, SUBTITLE = "Title", "Subtitle"
HEADINGS = {1: "Heading 1", 2: "Heading 2", 3: "Heading 3", 4: "Heading 4"}
BODY = "Normal"
META = "PT Meta"
CODE = "PT Code"
ANSWER = "PT Answer"
RUBRIC = "PT Rubric"
FOLLOW_UP = "PT Follow-up"
STAMP = "PT Stamp"
LIST = "PT List"
ANSWER_SPACE = "PT Answer Space"
TOC_LEVELS = {1: "TOC 1", 2: "TOC 2"}


def set_fonts(element, latin: str = LATIN_FONT, east_asian: str = CJK_FONT) -> None:
    """Name every font slot of a style or run; remove theme fonts that would override them."""
    _set_rpr_fonts(element.get_or_add_rPr(), latin, east_asian)


def _set_rpr_fonts(rpr, latin: str, east_asian: str) -> None:
    fonts = rpr.find(qn("w:rFonts"))
    if fonts is None:
        fonts = OxmlElement("w:rFonts")
        rpr.insert(0, fonts)
    for attr in ("w:asciiTheme", "w:hAnsiTheme", "w:eastAsiaTheme", "w:cstheme"):
        fonts.attrib.pop(qn(attr), None)
    for attr, value in (("w:ascii", latin), ("w:hAnsi", latin), ("w:cs", latin),
                        ("w:eastAsia", east_asian)):
        fonts.set(qn(attr), value)


def _set_language(styles_element) -> None:
    """Document defaults: Chinese as the East Asian language, explicit fonts everywhere."""
    defaults = styles_element.find(qn("w:docDefaults"))
    rpr = defaults.find(qn("w:rPrDefault")).find(qn("w:rPr"))
    lang = rpr.find(qn("w:lang"))
    if lang is None:
        lang = OxmlElement("w:lang")
        rpr.append(lang)
    lang.set(qn("w:val"), "en-US")
    lang.set(qn("w:eastAsia"), "zh-CN")
    _set_rpr_fonts(rpr, LATIN_FONT, CJK_FONT)


def shade(paragraph_format_element, fill: str, border: str | None = None) -> None:
    """Background (and optional box border) of a paragraph or paragraph style."""
    ppr = paragraph_format_element.get_or_add_pPr()
    if border:
        borders = OxmlElement("w:pBdr")
        for side in ("top", "left", "bottom", "right"):
            edge = OxmlElement(f"w:{side}")
            for key, value in (("w:val", "single"), ("w:sz", "4"), ("w:space", "4"),
                               ("w:color", border)):
                edge.set(qn(key), value)
            borders.append(edge)
        ppr.append(borders)
    shading = OxmlElement("w:shd")
    for key, value in (("w:val", "clear"), ("w:color", "auto"), ("w:fill", fill)):
        shading.set(qn(key), value)
    ppr.append(shading)


def _paragraph_style(document, name: str, base: str = BODY):
    styles = document.styles
    style = styles[name] if name in [s.name for s in styles] else \
        styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    style.base_style = styles[base] if name != base else None
    style.quick_style = True
    return style


def setup_styles(document) -> None:
    """Create and configure every named style the renderer uses."""
    _set_language(document.styles.element)
    normal = document.styles[BODY]
    set_fonts(normal.element)
    normal.font.size = BODY_SIZE
    normal.paragraph_format.space_after = Pt(4)
    normal.paragraph_format.line_spacing = 1.25

    for name, size in ((TITLE, 24), (SUBTITLE, 13)):
        style = document.styles[name]
        set_fonts(style.element)
        style.font.size = Pt(size)
        style.font.color.rgb = ACCENT
        style.font.italic = False  # CJK fonts have no italic; Word would slant them
        style.paragraph_format.keep_with_next = True
    for level, size in ((1, 18), (2, 15), (3, 12), (4, 10.5)):
        style = document.styles[HEADINGS[level]]
        set_fonts(style.element)
        style.font.size = Pt(size)
        style.font.bold = True
        style.font.italic = False
        style.font.color.rgb = ACCENT
        style.paragraph_format.keep_with_next = True
        style.paragraph_format.space_before = Pt(12 if level < 4 else 8)
        style.paragraph_format.space_after = Pt(3)
    document.styles[HEADINGS[2]].paragraph_format.page_break_before = True
    _setup_block_styles(document)


def _setup_block_styles(document) -> None:
    """ptbank's own styles: meta line, code, answer, rubric, follow-ups, stamp, TOC."""
    meta = _paragraph_style(document, META)
    meta.font.size = Pt(8.5)
    meta.font.color.rgb = RGBColor(0x55, 0x55, 0x55)
    meta.paragraph_format.keep_with_next = True

    code = _paragraph_style(document, CODE)
    set_fonts(code.element, CODE_FONT, CJK_FONT)
    code.font.size = CODE_SIZE
    code.paragraph_format.line_spacing_rule = WD_LINE_SPACING.SINGLE
    code.paragraph_format.keep_together = True
    code.paragraph_format.space_before = Pt(4)
    code.paragraph_format.space_after = Pt(6)
    code.paragraph_format.left_indent = Cm(0.2)
    shade(code.element, CODE_SHADING, CODE_BORDER)

    _paragraph_style(document, ANSWER)
    for name in (RUBRIC, FOLLOW_UP, LIST):
        style = _paragraph_style(document, name, ANSWER if name != LIST else BODY)
        style.paragraph_format.left_indent = Cm(0.9)
        style.paragraph_format.first_line_indent = Cm(-0.5)
        style.paragraph_format.space_after = Pt(2)
    stamp = _paragraph_style(document, STAMP)
    stamp.font.size = Pt(9)
    shade(stamp.element, "F3FAF6")
    space = _paragraph_style(document, ANSWER_SPACE)
    space.font.size = Pt(9)
    space.font.color.rgb = RGBColor(0x99, 0x99, 0x99)
    for level, style_name in TOC_LEVELS.items():
        style = _paragraph_style(document, style_name)
        style.paragraph_format.left_indent = Cm(0.6 * (level - 1))
        style.paragraph_format.space_after = Pt(1)
        style.font.bold = level == 1


def setup_page(document) -> None:
    section = document.sections[0]
    section.page_width, section.page_height = Cm(21), Cm(29.7)
    for side in ("left_margin", "right_margin"):
        setattr(section, side, Cm(1.8))
    section.top_margin = section.bottom_margin = Cm(2)

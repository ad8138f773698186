"""The one Markdown parser every format uses: CommonMark + GFM tables and task lists.

`html=False`: content is data, so raw HTML in a question prints as text, never as markup.
One convention carries what Markdown cannot: a comment line
`<!-- ptbank:answer-space N -->` asks for room to write for an N-minute question, and
`<!-- ptbank:answer-space N code -->` for a coding task (closer, numbered rows on a grid, so a
candidate can write code in columns and an interviewer can point at "line 12"), and
`<!-- ptbank:answer-space N notes -->` for an interviewer's notes box (captioned "Notes").
GitHub hides it; here it becomes a `ptbank_answer_space` token with meta `minutes`, `code`
and `notes`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.tasklists import tasklists_plugin

ANSWER_SPACE = "ptbank_answer_space"
ANSWER_LINE_CM = 0.8
"""Ruled lines in the room to write are this far apart, in every format."""
ANSWER_LINES_KEPT = 3
"""Lines that always share a page with their question; the rest may run on to the next page,
so that a long box never leaves its question alone at the foot of a page."""
CODE_LINE_CM = 0.6
"""Rows (and grid columns) of a coding task's room to write are this far apart."""
_LINES_PER_MINUTE = 2
_MAX_LINES = 20
_MAX_CODE_LINES = 40
"""A page of grid at CODE_LINE_CM: what a 20-minute task needs, and no more than a page."""
_DIRECTIVE = re.compile(r"^<!-- ptbank:answer-space (\d+)( code| notes)? -->$")


def _answer_space(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    line = state.src[state.bMarks[start] + state.tShift[start]: state.eMarks[start]].strip()
    found = _DIRECTIVE.match(line)
    if not found:
        return False
    if not silent:
        token = state.push(ANSWER_SPACE, "div", 0)
        token.meta = {"minutes": int(found.group(1)), "code": found.group(2) == " code",
                      "notes": found.group(2) == " notes"}
        token.map = [start, start + 1]
    state.line = start + 1
    return True


def answer_space_lines(minutes: int, code: bool = False) -> int:
    """Ruled lines of room to write for an N-minute question (or coding task), the same in
    every format."""
    most = _MAX_CODE_LINES if code else _MAX_LINES
    return max(ANSWER_LINES_KEPT, min(most, _LINES_PER_MINUTE * minutes))


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """CommonMark with tables, no raw HTML, and no images: printing content must never read a
    file or the network, in any format (`![alt](src)` reads as "!" and a link; lint refuses
    it in content)."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    md.use(tasklists_plugin, enabled=False)
    md.block.ruler.before("paragraph", ANSWER_SPACE, _answer_space)
    return md


def parse(markdown: str) -> list[Token]:
    return parser().parse(markdown)


def is_task_checkbox(token: Token) -> bool:
    """The html_inline token the task-list plugin puts before a `- [ ]` item's text."""
    return token.type == "html_inline" and "task-list-item-checkbox" in token.content


def top_level_blocks(tokens: list[Token]) -> list[list[Token]]:
    """Split a token stream into its top-level blocks (an open token through its close)."""
    blocks, current, depth = [], [], 0
    for token in tokens:
        current.append(token)
        depth += token.nesting
        if depth == 0:
            blocks.append(current)
            current = []
    return blocks

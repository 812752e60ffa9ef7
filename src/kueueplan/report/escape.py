"""The one place that makes PR-controlled text inert where kueueplan prints it.

Object, field, file and workload names come from the pull request. In a PR comment (GitHub-flavoured Markdown)
they must not mention people, open HTML, form links, close code spans or fences, or split table cells; in a
GitHub Actions log they must not start a workflow command (`::error::`, `::add-mask::`, `::set-output::`).

- `md_text`: plain text inside Markdown (a paragraph, a list item, a table cell).
- `md_code`: text shown as an inline code span (`table=True` inside a table row).
- `mermaid_text`, `gantt_text`: a label inside a ```mermaid fence.
- `gh_data` / `gh_property`: the message and the properties of a workflow command, escaped as the runner
  unescapes them (actions/runner ActionCommand: `%` `\\r` `\\n`, and `:` `,` in properties).
- `stop_commands`: wrap log output so the runner processes no workflow command inside it.
"""

from __future__ import annotations

import re
import secrets

ZWJ = "\u200d"  # zero-width joiner: `@\u200dteam` shows as "@team" but mentions nobody
ZWSP = "\u200b"  # zero-width space: breaks GitHub's autolinks (`https:\u200b//`, `www\u200b.`)

_NEWLINES = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# Inline punctuation Markdown or GitHub give a meaning to (code, emphasis, links and images, strikethrough,
# math); CommonMark lets any ASCII punctuation be backslash-escaped.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~$])")
# What opens a block (heading, list, quote, ordered list) when it starts a line.
_BLOCK_START = re.compile(r"^(\s*\d*)([#+\-=.)])")
_AUTOLINK = re.compile(r"(?i)(:(?=//)|www(?=\.))")


def one_line(text: object) -> str:
    """Newlines and other line breaks become spaces; control characters are dropped."""
    return _CONTROL.sub("", _NEWLINES.sub(" ", str(text)))


def md_text(text: object) -> str:
    """Inert Markdown text: no HTML, mention, link, emphasis, heading, code span or table cell boundary."""
    s = one_line(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _BLOCK_START.sub(r"\1\\\2", s, count=1)
    s = s.replace("@", "@" + ZWJ)
    return _AUTOLINK.sub(lambda m: m.group(1) + ZWSP, s)


def md_code(text: object, table: bool = False) -> str:
    """An inline code span that shows `text` literally, whatever backticks it holds.

    Inside a code span nothing is a mention, link or HTML; the fence is one backtick longer than the longest
    run inside. In a table row GFM splits cells on `|` even inside code spans unless it is escaped as `\\|`.
    """
    s = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    out = f"{fence}{pad}{s}{pad}{fence}"
    return out.replace("|", "\\|") if table else out


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table whose cells are rendered already (md_text, md_code with table=True)."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


_MERMAID = {ord(c): f"#{code};" for c, code in (("#", "35"), ("&", "amp"), ('"', "quot"), ("<", "lt"), (">", "gt"),
                                                ("`", "96"), ("|", "124"))}
_GANTT = {**_MERMAID, ord(":"): "#58;", ord(";"): "#59;"}


def mermaid_text(text: object) -> str:
    """A Mermaid label (inside quotes): entity codes for what could end the label, the node or the fence."""
    return one_line(text).translate(_MERMAID).replace("@", "@" + ZWJ)


def gantt_text(text: object) -> str:
    """A Mermaid Gantt title, section or task name (unquoted: `:` and `;` would end it too)."""
    return one_line(text).translate(_GANTT).replace("@", "@" + ZWJ)


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def display_text(text: object) -> str:
    """Text every output encoding can carry: file names that are not UTF-8 (decoded by Python with
    surrogate escapes) get U+FFFD for their undecodable bytes instead of crashing the writer."""
    s = str(text)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode(
            "utf-8", "replace").decode("utf-8")


def xml_text(text: object) -> str:
    """`display_text` without the characters XML 1.0 forbids (escaping <, & and quotes is the writer's job)."""
    return _XML_INVALID.sub("\ufffd", display_text(text))


def gh_data(text: object) -> str:
    """The message of a workflow command (actions/runner escapes: % first, then CR and LF)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: object) -> str:
    """A property value of a workflow command (`file=`, `title=`): also `:` and `,`."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")


def stop_token() -> str:
    return secrets.token_hex(16)


def stop_commands(text: str, token: str | None = None) -> str:
    """`text` between `::stop-commands::TOKEN` and `::TOKEN::`: the runner prints it without acting on it.

    The token is random per call, so text from the PR cannot guess it to resume command processing early.
    """
    token = token or stop_token()
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"::stop-commands::{token}\n{body}::{token}::\n"

"""Strings from captures are text, in every output.

A capture's manifest values, file names and device names come from
strangers and end up in the published book: in HTML tables and figures, in
the Markdown (MyST) that notebooks display, in links and in matplotlib text.
Each output has its own syntax, so each has one function here, used at the
rendering boundary:

- `html_text(s)`: HTML element content and attribute values (`<`, `>`, `&`,
  quotes);
- `md_text(s)`: MyST Markdown displayed by a notebook: every ASCII
  punctuation character is backslash-escaped (CommonMark allows it for all
  of them), so `{raw}` roles, ```` ``` ```` fences, `<script>`, `[x](javascript:..)`
  links, `$math$` and `*emphasis*` stay literal text;
- `fence(s)`: a code-fence marker longer than any run of backticks in `s`,
  for a directive whose body is taken as plain text (mobitrace.book.sphinxext);
- `safe_href(s)`: a link target that is a relative path or http(s) URL, else
  "#" (`javascript:`, `data:`, `vbscript:` never become links);
- `mpl_text(s)`: matplotlib text (labels, titles, legends) with `$` escaped,
  so a name is not parsed as mathtext (which can fail or mislead);
  matplotlib's SVG writer escapes the XML itself.
"""

from __future__ import annotations

import html
import re
import string
from urllib.parse import urlsplit

_MD_SPECIAL = set(string.punctuation)


def html_text(value, quote: bool = True) -> str:
    """`value` as HTML text (safe in element content and quoted attributes)."""
    return html.escape(str(value), quote=quote)


def md_text(value) -> str:
    """`value` as literal MyST/CommonMark text: ASCII punctuation
    backslash-escaped, line breaks folded to spaces (a value is one line)."""
    text = " ".join(str(value).splitlines())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def fence(value, char: str = "`") -> str:
    """A fence of `char` (at least 3) longer than any run of it in `value`:
    the value can't close the block it is in."""
    longest = max((len(m) for m in re.findall(re.escape(char) + "+", str(value))), default=0)
    return char * max(3, longest + 1)


SAFE_SCHEMES = ("http", "https")


def safe_href(value) -> str:
    """`value` if it is a relative reference or an http(s) URL, else "#".
    Control characters and spaces (which browsers strip before reading a
    scheme, `java\\tscript:`) count as unsafe."""
    text = str(value)
    if not text or any(ord(ch) < 0x21 or ord(ch) == 0x7f for ch in text):
        return "#"
    scheme = urlsplit(text).scheme.lower()
    if scheme and scheme not in SAFE_SCHEMES:
        return "#"
    if not scheme and ":" in text.split("/", 1)[0]:  # 'javascript&colon;...' style tricks
        return "#"
    return text


def mpl_text(value) -> str:
    """`value` for matplotlib text: `$` escaped (no mathtext)."""
    return str(value).replace("$", r"\$")

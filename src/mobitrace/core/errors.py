"""One error type for bad input, with the location a user needs to fix it."""

from __future__ import annotations

import re

# Control and format characters (C0, DEL, C1, bidi overrides, line and
# paragraph separators): a file name could otherwise erase or fake a line on
# the terminal that prints it.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def printable(text: str) -> str:
    """`text` with control characters shown as escapes (\\n, \\x1b, \\u202e)."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1] if m.group() in "\n\r\t"
                            else f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)


class InputError(ValueError):
    """Bad input: names the file, the line or record, the field, what was
    expected and what was found."""

    def __init__(self, path, where: str | None, field: str | None, expected: str, found):
        self.path = str(path)
        self.where = where
        self.field = field
        self.expected = expected
        if type(found).__module__ == "numpy" and hasattr(found, "item"):
            found = found.item()  # show -0.5, not np.float64(-0.5)
        self.found = found
        parts = [printable(self.path)]
        if where:
            parts.append(printable(str(where)))
        if field:
            parts.append(f"field '{printable(str(field))}'")
        super().__init__(f"{': '.join(parts)}: expected {expected}, found {printable(repr(found))}")


class Plain(str):
    """A `found` shown as is, without quotes (e.g. "byte 0xff at offset 3")."""

    def __repr__(self) -> str:
        return str(self)


def plain_check(check) -> str:
    """What a pandera check expects, in words: greater_than(0) -> 'a value
    > 0', isin(['TCP']) -> 'one of TCP', field_uniqueness -> 'a value no
    other row has'."""
    import ast

    text = str(check)
    name, _, args = text.partition("(")
    try:
        values = ast.literal_eval(f"({args[:-1]},)") if args.endswith(")") else ()
    except (ValueError, SyntaxError):
        return f"to pass check {text}"
    one = values[0] if values else None
    words = {
        "greater_than": lambda: f"a value > {one}",
        "greater_than_or_equal_to": lambda: f"a value >= {one}",
        "less_than": lambda: f"a value < {one}",
        "less_than_or_equal_to": lambda: f"a value <= {one}",
        "equal_to": lambda: f"exactly {one}",
        "in_range": lambda: f"a value from {values[0]} to {values[1]}",
        "isin": lambda: "one of " + ", ".join(str(v) for v in one),
        "notin": lambda: "none of " + ", ".join(str(v) for v in one),
        "str_matches": lambda: f"text of the form {one}",
        "str_length": lambda: f"text of {values[0]} to {values[1]} characters",
        "field_uniqueness": lambda: "a value no other row has",
        "not_nullable": lambda: "a value (not empty)",
    }
    try:
        return words[name]() if name in words else f"to pass check {text}"
    except (IndexError, TypeError):
        return f"to pass check {text}"

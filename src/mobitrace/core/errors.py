"""One error type for bad input, with the location a user needs to fix it."""

from __future__ import annotations


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
        parts = [self.path]
        if where:
            parts.append(where)
        if field:
            parts.append(f"field '{field}'")
        super().__init__(f"{': '.join(parts)}: expected {expected}, found {found!r}")


class Plain(str):
    """A `found` shown as is, without quotes (e.g. "byte 0xff at offset 3")."""

    def __repr__(self) -> str:
        return str(self)

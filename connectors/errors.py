"""Errors raised by connectors: each names the file, key or object at fault."""

import difflib
from collections.abc import Iterable, Mapping


class SourceError(RuntimeError):
    """A source could not be read as expected (missing file, bad manifest, unknown layout)."""


def missing_columns_error(
    location: object, what: str, missing: list[str], present: Iterable[str] | Mapping[str, str]
) -> SourceError:
    """The error for a file that lacks required columns, naming any column of the file that looks
    like a renamed one (a column renamed upstream is a column gone).

    Args:
        location: the file.
        what: the format, as the message names it.
        missing: the required columns the file lacks.
        present: the file's columns, or {name compared with `missing`: name as the file writes it}.
    """
    shown = dict(present) if isinstance(present, Mapping) else {name: name for name in present}
    lookalikes = [
        f"{shown[found]!r} (renamed {name!r}?)"
        for name in missing
        for found in difflib.get_close_matches(name, list(shown), n=1, cutoff=0.8)
    ]
    hint = f"; the file has {', '.join(lookalikes)}: rename the column back or re-export the data" if lookalikes else ""
    return SourceError(f"{location}: {what} columns missing: {', '.join(missing)}{hint}")

"""Errors raised by connectors: each names the file, key or object at fault."""


class SourceError(RuntimeError):
    """A source could not be read as expected (missing file, bad manifest, unknown layout)."""

"""Export files in a local file or folder (GCP billing export files, FOCUS exports)."""

from pathlib import Path

from connectors.errors import SourceError


def list_export_files(location: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The export files at `location` (a file, or every matching file below a folder), sorted.

    Raises:
        SourceError: when nothing matching is there.
    """
    if location.is_file():
        if not location.name.lower().endswith(suffixes):
            raise SourceError(f"{location}: expected a file ending in {', '.join(suffixes)}")
        return [location]
    files = sorted(p for p in location.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes))
    if not files:
        raise SourceError(f"{location}: no export files ({', '.join(suffixes)}) found")
    return files

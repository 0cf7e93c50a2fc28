"""What the tests share: the repository's paths and small file helpers."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def write_config(folder: Path, text: str) -> Path:
    """Writes `runledger.yaml` into `folder` and returns its path."""
    path = folder / "runledger.yaml"
    path.write_text(text)
    return path

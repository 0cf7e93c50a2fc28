"""runledger.yaml validation: every problem names the file and the key."""

from pathlib import Path

import pytest

from pipelines.config import ConfigError, load_config
from tests.conftest import write_config


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path, focus_sample: Path) -> None:
    (tmp_path / "exports").mkdir()
    config = load_config(
        write_config(tmp_path, "warehouse: wh/w.duckdb\nsources:\n  - {name: f, kind: focus, path: exports}\n")
    )
    assert config.warehouse_path == tmp_path / "wh" / "w.duckdb"
    assert config.reports_path == tmp_path / ".runledger" / "reports"
    assert config.attribution.dimensions["training_run"] == ["training_run", "training-run", "TrainingRun", "run_id"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("warehous: x.duckdb\n", "warehous: unknown key"),
        ("sources:\n  - {name: a, kind: focus, path: nowhere}\n", "sources[0].path:"),
        ("sources:\n  - {name: a, kind: s3_magic, path: x}\n", "sources[0]"),
        ("sources:\n  - {name: a, kind: focus, path: ., colour: red}\n", "sources[0].colour: unknown key"),
        ("sources:\n  - {name: a, kind: gcp_billing}\n", "give exactly one of `table`"),
        ("sources:\n  - {name: a, kind: gcp_billing, path: ., project: p}\n", "`project` and `endpoint_url` apply to `table`"),
        ("sources:\n  - {name: a, kind: gcp_billing, table: 'x; drop'}\n", "is not a BigQuery table id"),
        ("attribution:\n  dimensions:\n    project: [p]\n", "attribution.dimensions.project"),
        ("attribution:\n  runs: runs.yaml\n", "attribution.runs:"),
        ("sources: [\n", "not valid YAML (line"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        (
            "sources:\n  - {name: a, kind: focus, path: .}\n  - {name: a, kind: focus, path: .}\n",
            "source names must be unique, repeated: a",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceName: x}, split: even}\n",
            "attribution.shared: shared-cost rules are not applied",
        ),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(path) in str(raised.value)
    assert expected in str(raised.value)


def test_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="runledger.yaml: file not found"):
        load_config(tmp_path / "runledger.yaml")


def test_default_config_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path, "warehouse: from-env.duckdb\n")
    monkeypatch.setenv("RUNLEDGER_CONFIG", str(path))
    assert load_config().warehouse_path == tmp_path / "from-env.duckdb"


def test_orchestration_defaults_and_bad_values(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, "warehouse: w.duckdb\n"))
    assert (config.orchestration.cron, config.orchestration.timezone) == ("0 6 * * *", "UTC")
    assert (config.orchestration.freshness_max_age_hours, config.orchestration.untagged_share_threshold) == (72, 0.25)
    for text, key in [
        ("orchestration:\n  untagged_share_threshold: 1.5\n", "orchestration.untagged_share_threshold"),
        ("orchestration:\n  cron: every night\n", "orchestration.cron"),
        ("orchestration:\n  freshness_max_age: 12\n", "orchestration.freshness_max_age"),
    ]:
        with pytest.raises(ConfigError, match=rf"runledger.yaml: {key}: "):
            load_config(write_config(tmp_path, text))

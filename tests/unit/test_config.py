"""runledger.yaml validation: every problem names the file and the key."""

import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from tests.support import write_config


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path, focus_sample: Path) -> None:
    (tmp_path / "exports").mkdir()
    config = load_config(
        write_config(tmp_path, "warehouse: wh/lake\nsources:\n  - {name: f, kind: focus, path: exports}\n")
    )
    assert config.lake.sqlite_file == tmp_path / "wh" / "lake" / "catalog.sqlite"
    assert config.lake.data_path == f"{tmp_path / 'wh' / 'lake' / 'data'}/"
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
        (
            "sources:\n  - {name: e, kind: run_events}\n",
            "sources[0]: Value error, give exactly one of `path` (JSON lines file or folder) or `mlflow`",
        ),
        ("sources:\n  - {name: e, kind: run_events, path: nowhere.jsonl}\n", "sources[0].path:"),
        ("sources:\n  - {name: m, kind: manual_costs, path: nowhere}\n", "sources[0].path:"),
        ("sources:\n  - {name: m, kind: manual_costs}\n", "sources[0].path: Field required"),
        (
            "sources:\n  - {name: e, kind: run_events, mlflow: {tracking_uri: x}}\n",
            "sources[0].mlflow.experiment_names: Field required",
        ),
        (
            "sources:\n  - {name: e, kind: run_events, path: ., mlflow: {tracking_uri: x, experiment_names: [a]}}\n",
            "give exactly one of `path`",
        ),
        ("waste:\n  checkpoints: ['*ckpt*']\n", "waste.checkpoints: unknown key"),
        (
            "sources:\n  - {name: a, kind: gcp_billing, path: ., project: p}\n",
            "`project` and `endpoint_url` apply to `table`",
        ),
        ("sources:\n  - {name: a, kind: gcp_billing, table: 'x; drop'}\n", "is not a BigQuery table id"),
        (
            "attribution:\n  dimensions:\n    Cost-Center: [p]\n",
            "attribution.dimensions: Value error, Cost-Center: a dimension's name is lower-case letters",
        ),
        (
            "attribution:\n  dimensions:\n    project: []\n",
            "attribution.dimensions: Value error, project: give at least",
        ),
        (
            "gpu_instance_types: {p5.48xlarge: 0}\n",
            "gpu_instance_types: Value error, p5.48xlarge: 0 is not a positive whole number of GPUs",
        ),
        ("gpu_instance_types: gpus.csv\n", "gpus.csv does not exist"),
        ("attribution:\n  runs: runs.yaml\n", "attribution.runs:"),
        ("sources: [\n", "not valid YAML (line"),
        ("sources: []\n\x00\n", "not valid YAML (character 13): #x0000 is a character YAML does not allow"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        (
            "sources:\n  - {name: a, kind: focus, path: .}\n  - {name: a, kind: focus, path: .}\n",
            "source names must be unique, repeated: a",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceNam: x}, split: even}\n",
            "attribution.shared[0].match: Value error, ServiceNam: not a text column of focus_line_items",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {BilledCost: '1*'}, split: even}\n",
            "attribution.shared[0].match: Value error, BilledCost: not a text column",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {}, split: even}\n",
            "attribution.shared[0].match: Value error, give at least one",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceName: x}, split: half}\n",
            "attribution.shared[0].split: Input should be",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceName: x}, split: fixed}\n",
            "attribution.shared[0]: Value error, weights: a `fixed` split needs",
        ),
        (
            (
                "attribution:\n  shared:\n"
                "    - {name: s, match: {ServiceName: x}, split: fixed, weights: {a: 0.7, b: 0.2}}\n"
            ),
            "weights: must sum to exactly 1, they sum to 0.9",
        ),
        (
            (
                "attribution:\n  shared:\n"
                "    - {name: s, match: {ServiceName: x}, split: fixed, weights: {a: 1.5, b: -0.5}}\n"
            ),
            "attribution.shared[0].weights.b: Value error, must be greater than 0, got -0.5",
        ),
        (
            (
                "attribution:\n  shared:\n"
                "    - {name: s, match: {ServiceName: x}, split: fixed, "
                "weights: {a: 0.12345678901, b: 0.87654321099}}\n"
            ),
            (
                "attribution.shared[0].weights.a: Value error, must have at most 10 decimal places (the split counts "
                "weights in units of 1e-10), got 0.12345678901; round it"
            ),
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceName: x}, split: even, weights: {a: 1}}\n",
            "weights: only a `fixed` split takes weights",
        ),
        (
            (
                "attribution:\n  shared:\n"
                "    - {name: s, match: {ServiceName: x}, split: even}\n"
                "    - {name: s, match: {ServiceName: y}, split: even}\n"
            ),
            "attribution.shared: Value error, rule names must be unique, repeated: s",
        ),
        (
            "attribution:\n  shared:\n    - {name: s, match: {ServiceName: x}, split: even, colour: red}\n",
            "attribution.shared[0].colour: unknown key",
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
    with pytest.raises(ConfigError, match=re.escape("runledger.yaml: file not found")):
        load_config(tmp_path / "runledger.yaml")


def test_default_config_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path, "warehouse: from-env\n")
    monkeypatch.setenv("RUNLEDGER_CONFIG", str(path))
    assert load_config().lake.sqlite_file == tmp_path / "from-env" / "catalog.sqlite"


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


def test_shared_rules_keep_their_order_and_exact_weights(tmp_path: Path) -> None:
    config = load_config(
        write_config(
            tmp_path,
            "attribution:\n  shared:\n"
            "    - {name: support, match: {ServiceName: 'AWS Support*'}, split: proportional}\n"
            "    - {name: sp, match: {ChargeCategory: Purchase}, split: fixed, weights: {a: 0.1, b: 0.2, c: 0.7}}\n",
        )
    )
    assert [rule.name for rule in config.attribution.shared] == ["support", "sp"]
    # 0.1 + 0.2 + 0.7 is not 1 in binary floating point; the weights are read as the decimals written
    assert config.attribution.shared[1].weights == {"a": Decimal("0.1"), "b": Decimal("0.2"), "c": Decimal("0.7")}


def test_the_team_lake_takes_its_catalog_and_data_path_from_the_config(tmp_path: Path) -> None:
    config = load_config(
        write_config(
            tmp_path,
            "warehouse:\n  catalog: {postgres: {host: db.internal, port: 6432, dbname: finops}}\n"
            "  data_path: s3://lake-bucket/runledger\n  endpoint_url: http://127.0.0.1:9000\n",
        )
    )
    lake = config.lake
    assert (lake.catalog, lake.data_path) == (
        "postgres:host=db.internal port=6432 dbname=finops",
        "s3://lake-bucket/runledger/",
    )
    assert (lake.s3_endpoint, lake.s3_use_ssl, lake.state_dir) == ("127.0.0.1:9000", False, tmp_path / ".runledger")
    assert lake.extensions == ("ducklake", "postgres_scanner", "httpfs", "aws")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("warehouse: {catalog: {postgres: {host: x, dbname: d}, sqlite: c.sqlite}, data_path: d/}\n", "exactly one of"),
        ("warehouse: {catalog: {postgres: {host: 'x; drop', dbname: d}}, data_path: d/}\n", "not a host name"),
        ("warehouse: {catalog: {postgres: {host: x, dbname: d}}, data_path: 's3:///nobucket'}\n", "needs a bucket"),
        (
            "warehouse: {catalog: {postgres: {host: x, dbname: d, password: p}}, data_path: d/}\n",
            "password: unknown key",
        ),
    ],
)
def test_a_bad_team_lake_names_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(write_config(tmp_path, text))


def test_an_earlier_warehouse_file_is_named_for_migration(tmp_path: Path) -> None:
    (tmp_path / ".runledger").mkdir()
    (tmp_path / ".runledger" / "warehouse.duckdb").write_bytes(bytes(8) + b"DUCK")  # a DuckDB file's header
    assert (
        load_config(write_config(tmp_path, "sources: []\n")).lake.legacy_file
        == tmp_path / ".runledger" / "warehouse.duckdb"
    )
    assert load_config(write_config(tmp_path, "warehouse: .runledger/warehouse.duckdb\n")).lake.legacy_file == (
        tmp_path / ".runledger" / "warehouse.duckdb"
    )
    assert load_config(write_config(tmp_path, "warehouse: elsewhere\n")).lake.legacy_file is None


def test_registry_errors_name_each_entry_by_position_and_id(tmp_path: Path) -> None:
    from pipelines.attribution.registry import load_registry

    runs = tmp_path / "runs.yaml"
    runs.write_text(
        "runs:\n  - id: main\n  - {id: probe, weight: -2}\n"
        "  - {id: eval, start: 2026-10-02, end: 2026-10-01}\n  - {weight: 1}\n"
    )
    with pytest.raises(ConfigError) as error:
        load_registry(runs)
    assert str(error.value).splitlines() == [
        f"{runs}: runs[1] (id probe).weight: Value error, must be greater than 0, got -2",
        f"{runs}: runs[2] (id eval): Value error, end must be after start (the window is [start, end))",
        f"{runs}: runs[3].id: Field required",
    ]


def test_freshness_is_judged_at_the_configured_moment_in_utc(tmp_path: Path) -> None:
    assert load_config(write_config(tmp_path, "warehouse: w\n")).orchestration.freshness_as_of is None
    # quoted text or a YAML timestamp; an offset is converted, none means UTC
    for moment in (
        "'2026-11-29T08:00:00+02:00'",
        "2026-11-29T08:00:00+02:00",
        "2026-11-29T06:00:00Z",
        "2026-11-29 06:00",
    ):
        config = load_config(write_config(tmp_path, f"orchestration:\n  freshness_as_of: {moment}\n"))
        assert config.orchestration.freshness_as_of == datetime(2026, 11, 29, 6)
    with pytest.raises(ConfigError, match=r"runledger.yaml: orchestration.freshness_as_of: "):
        load_config(write_config(tmp_path, "orchestration:\n  freshness_as_of: last tuesday\n"))


ALERTS_EXAMPLE = """alerts:
  destinations:
    - {name: finops-slack, kind: slack, url_env: RUNLEDGER_SLACK_WEBHOOK_URL}   # Slack-compatible
    - {name: hooks, kind: webhook, url_env: RUNLEDGER_ALERT_WEBHOOK_URL}        # JSON POST
    - name: mail
      kind: smtp
      host: smtp.example.com
      port: 587
      starttls: true                       # optional; username_env / password_env optional
      from: runledger@example.com
      to: [finops@example.com]
      owners: [alice]                      # optional on any destination: only these owners' runs
"""


def test_alert_destinations_as_documented(tmp_path: Path) -> None:
    alerts = load_config(write_config(tmp_path, ALERTS_EXAMPLE)).alerts
    slack, hooks, mail = alerts.destinations
    assert (slack.kind, slack.url_env, slack.owners) == ("slack", "RUNLEDGER_SLACK_WEBHOOK_URL", None)
    assert (hooks.kind, hooks.url_env) == ("webhook", "RUNLEDGER_ALERT_WEBHOOK_URL")
    assert (mail.host, mail.port, mail.starttls, mail.from_, mail.to, mail.owners) == (
        "smtp.example.com",
        587,
        True,
        "runledger@example.com",
        ["finops@example.com"],
        ["alice"],
    )
    assert (mail.username_env, mail.password_env) == (None, None)
    assert (alerts.attempts, alerts.backoff_seconds, alerts.timeout_seconds) == (3, 2.0, 10.0)
    assert load_config(write_config(tmp_path, "warehouse: w\n")).alerts.destinations == []


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("{name: a, kind: teams, url_env: X}", "alerts.destinations[0]: Input tag 'teams' found using 'kind'"),
        ("{name: a, kind: slack}", "alerts.destinations[0].url_env: Field required"),
        (
            "{name: a, kind: slack, url: 'https://hooks.slack.com/services/T0/B0/secret'}",
            "destinations[0].url: unknown",
        ),
        ("{name: a, kind: webhook, url_env: 'https://x'}", "destinations[0].url_env: Value error, 'https://x' is not"),
        ("{name: a, kind: slack, url_env: X, owners: []}", "alerts.destinations[0].owners: List should have at least"),
        ("{name: m, kind: smtp, host: h, from: r@example.com}", "alerts.destinations[0].to: Field required"),
        ("{name: m, kind: smtp, host: h, from: nobody, to: [f@example.com]}", "destinations[0].from: Value error, 'n"),
        ("{name: m, kind: smtp, host: h, from: r@x.com, to: [f@x.com], port: 0}", "destinations[0].port: Input should"),
        (
            "{name: m, kind: smtp, host: h, from: r@x.com, to: [f@x.com], username_env: U}",
            "alerts.destinations[0]: Value error, give both `username_env` and `password_env`, or neither",
        ),
        (
            "{name: m, kind: smtp, host: h, from: r@x.com, to: [f@x.com], password: hunter2}",
            "alerts.destinations[0].password: unknown key",
        ),
    ],
)
def test_a_bad_alert_destination_names_the_key(tmp_path: Path, destination: str, expected: str) -> None:
    path = write_config(tmp_path, f"alerts:\n  destinations:\n    - {destination}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert f"{path}: " in str(raised.value) and expected in str(raised.value)
    assert "hunter2" not in str(raised.value) and "secret" not in str(raised.value)


def test_alert_destination_names_are_unique_and_retries_bounded(tmp_path: Path) -> None:
    text = (
        "alerts:\n  destinations:\n"
        "    - {name: a, kind: slack, url_env: X}\n    - {name: a, kind: webhook, url_env: Y}\n"
    )
    with pytest.raises(
        ConfigError, match=re.escape("alerts.destinations: Value error, destination names must be unique")
    ):
        load_config(write_config(tmp_path, text))
    with pytest.raises(ConfigError, match=re.escape("alerts.attempts: Input should be less than or equal to 10")):
        load_config(write_config(tmp_path, "alerts:\n  attempts: 11\n"))

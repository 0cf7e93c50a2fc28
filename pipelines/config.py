"""`runledger.yaml`: loading, validation and path resolution.

Every problem is a `ConfigError` whose message names the file and the key at fault; the CLI
turns it into exit code 2.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from connectors.gcp.settings import BIGQUERY_TABLE_ID
from pipelines.warehouse.catalog import table_columns
from pipelines.warehouse.lake import CATALOG_FILE, DUCKDB_HEADER, SQLITE_HEADER, Lake, starts_with

CONFIG_ENV_VAR = "RUNLEDGER_CONFIG"
DEFAULT_CONFIG_FILE = "runledger.yaml"
DEFAULT_DIMENSIONS = {
    "training_run": ["training_run", "training-run", "TrainingRun", "run_id"],
    "experiment": ["experiment"],
    "dataset_version": ["dataset_version", "dataset"],
    "owner": ["owner", "team"],
}

# A dimension of the user's own (attribution.dimensions): its name keys custom_dimensions maps.
CUSTOM_DIMENSION_NAME = re.compile(r"[a-z][a-z0-9_]*")

DEFAULT_CHECKPOINT_RESOURCES = ("*ckpt*", "*checkpoint*")
# AWS: "… US East (Northern Virginia) data transfer to US West (Oregon)";
# GCP: "Network Inter Region Data Transfer Out from Americas to EMEA".
DEFAULT_INTER_REGION_TRANSFER = ("*inter region*", "*inter-region*", "*interregion*", "*data transfer to *")


# Text columns of focus_line_items that name a line itself, not what it bills: no shared rule matches them.
LINE_IDENTITY_COLUMNS = ("x_LineItemKey", "x_SourceFile", "x_DerivedFrom")


def shared_match_columns() -> tuple[str, ...]:
    """The text columns of `focus_line_items` (as its DDL creates them) a shared-cost rule may
    match (sql/attribution/shared_matches.sql): every one but the line's key, file and the key it
    was derived from."""
    columns = table_columns("focus_line_items")
    return tuple(name for name, type_ in columns.items() if type_ == "VARCHAR" and name not in LINE_IDENTITY_COLUMNS)


class ConfigError(ValueError):
    """A configuration problem; the message names the file and key."""


def repeated(names: list[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


WEIGHT_DECIMAL_PLACES = 10
"""Decimal places a weight may have: the splits count weights in units of 1e-10."""
MAX_WEIGHT = Decimal(10) ** 6
"""The largest weight: weight units x seconds of overlap must fit the splits' HUGEINT arithmetic."""


def _require_weight(weight: Decimal) -> Decimal:
    """The one rule for every weight (run registry and fixed shared-cost splits): a decimal in
    (0, 10^6] with at most 10 decimal places, so that the split counts it exactly."""
    if weight <= 0:
        raise ValueError(f"must be greater than 0, got {weight}")
    if weight > MAX_WEIGHT:
        raise ValueError(f"must be at most 1000000 (weights are relative: scale them all down), got {weight}")
    if weight.as_tuple().exponent < -WEIGHT_DECIMAL_PLACES:
        raise ValueError(
            f"must have at most {WEIGHT_DECIMAL_PLACES} decimal places (the split counts weights in units "
            f"of 1e-10), got {weight}; round it"
        )
    return weight


Weight = Annotated[Decimal, AfterValidator(_require_weight)]
"""A weight as written (`0.00001` is read from its text, never through a float's binary value)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AwsCurSource(_Strict):
    """AWS billing exports (legacy CUR, CUR 2.0, AWS FOCUS) under an S3 prefix or local folder."""

    name: str
    kind: Literal["aws_cur"]
    uri: str
    endpoint_url: str | None = None

    @field_validator("uri")
    @classmethod
    def _s3_bucket(cls, uri: str) -> str:
        if uri.startswith("s3://") and not uri[len("s3://") :].split("/", 1)[0]:
            raise ValueError("an s3:// URI needs a bucket: s3://bucket/prefix/report-or-export-name")
        return uri

    @property
    def is_local(self) -> bool:
        return not self.uri.startswith("s3://")


class GcpBillingSource(_Strict):
    """The GCP Cloud Billing export: a BigQuery table or a local folder of its files."""

    name: str
    kind: Literal["gcp_billing"]
    table: str | None = None
    path: str | None = None
    project: str | None = None  # runs the BigQuery jobs; default the table's project
    endpoint_url: str | None = None  # a BigQuery emulator (unauthenticated), for tests

    @model_validator(mode="after")
    def _one_location(self) -> GcpBillingSource:
        if (self.table is None) == (self.path is None):
            raise ValueError("give exactly one of `table` (BigQuery) or `path` (local folder)")
        if self.path is not None and (self.project or self.endpoint_url):
            raise ValueError("`project` and `endpoint_url` apply to `table` (BigQuery) only")
        if self.table is not None and not BIGQUERY_TABLE_ID.match(self.table):
            raise ValueError(f"table {self.table!r} is not a BigQuery table id project.dataset.table")
        return self


class FocusSource(_Strict):
    """Any FOCUS 1.0-1.2 export, CSV or Parquet, a file or a folder."""

    name: str
    kind: Literal["focus"]
    path: str


class ManualCostsSource(_Strict):
    """Costs no cloud bills (labour, data labelling, tooling, ...): CSV or YAML files, a file or a folder."""

    name: str
    kind: Literal["manual_costs"]
    path: str


class AwsTagsSource(_Strict):
    """A Resource Groups Tagging API snapshot."""

    name: str
    kind: Literal["aws_tags"]
    regions: list[str] = Field(min_length=1)
    endpoint_url: str | None = None


class MlflowEvents(_Strict):
    """MLflow runs read as run events through the MLflow tracking client."""

    tracking_uri: str = Field(min_length=1)
    experiment_names: list[str] = Field(min_length=1)
    training_run_tag: str = "training_run"


class RunEventsSource(_Strict):
    """A training-run event log: JSON lines under `path`, or MLflow runs."""

    name: str
    kind: Literal["run_events"]
    path: str | None = None
    mlflow: MlflowEvents | None = None

    @model_validator(mode="after")
    def _one_origin(self) -> RunEventsSource:
        if (self.path is None) == (self.mlflow is None):
            raise ValueError("give exactly one of `path` (JSON lines file or folder) or `mlflow`")
        return self


Source = Annotated[
    AwsCurSource | GcpBillingSource | FocusSource | ManualCostsSource | AwsTagsSource | RunEventsSource,
    Field(discriminator="kind"),
]
BillingSource = AwsCurSource | GcpBillingSource | FocusSource | ManualCostsSource


class SharedRule(_Strict):
    """A shared-cost rule: lines no run claimed whose FOCUS columns match every
    glob of `match` are split among runs."""

    name: str = Field(min_length=1)
    match: dict[str, str]
    split: Literal["proportional", "even", "fixed"]
    weights: dict[str, Weight] | None = None

    @field_validator("match")
    @classmethod
    def _focus_text_columns(cls, match: dict[str, str]) -> dict[str, str]:
        if not match:
            raise ValueError('give at least one FOCUS column glob (`{ChargeCategory: "*"}` matches every line)')
        columns = shared_match_columns()
        unknown = [column for column in match if column not in columns]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not a text column of focus_line_items; "
                f"columns a rule can match: {', '.join(columns)}"
            )
        return match

    @model_validator(mode="after")
    def _weights_fit_the_split(self) -> SharedRule:
        _require_split_weights(self.split, self.weights)
        return self


def _require_split_weights(split: str, weights: dict[str, Decimal] | None) -> None:
    """The one rule for a split's weights (shared-cost and commitment rules): a `fixed` split
    takes weights per training run summing to exactly 1, any other split none."""
    if split != "fixed":
        if weights is not None:
            raise ValueError(f"weights: only a `fixed` split takes weights (this rule splits {split})")
        return
    if not weights:
        raise ValueError("weights: a `fixed` split needs weights per training run, summing to 1")
    total = sum(weights.values())
    if total != 1:
        raise ValueError(f"weights: must sum to exactly 1, they sum to {total}")


class CommitmentRule(_Strict):
    """A chargeback rule: the unused part of every commitment whose CommitmentDiscountId matches
    the glob `commitment` is charged to runs — by fixed weights, or by each run's effective cost
    of the usage that commitment covered in the same billing period (`covered_usage`)."""

    name: str = Field(min_length=1)
    commitment: str = Field(min_length=1)
    split: Literal["covered_usage", "fixed"]
    weights: dict[str, Weight] | None = None

    @model_validator(mode="after")
    def _weights_fit_the_split(self) -> CommitmentRule:
        _require_split_weights(self.split, self.weights)
        return self


class Commitments(_Strict):
    """Charging unused commitment back to runs (`attribution.commitments`): off unless
    `chargeback` is true; the rules apply in order, the first whose glob matches wins."""

    chargeback: bool = False
    rules: list[CommitmentRule] = Field(default_factory=list)

    @field_validator("rules")
    @classmethod
    def _unique_rule_names(cls, rules: list[CommitmentRule]) -> list[CommitmentRule]:
        duplicates = repeated([rule.name for rule in rules])
        if duplicates:
            raise ValueError(f"rule names must be unique, repeated: {', '.join(duplicates)}")
        return rules

    @model_validator(mode="after")
    def _rules_when_on(self) -> Commitments:
        if self.chargeback and not self.rules:
            raise ValueError("rules: `chargeback: true` needs at least one rule naming the commitments to charge")
        return self

    @property
    def active_rules(self) -> list[CommitmentRule]:
        """The rules attribution applies: none while chargeback is off."""
        return self.rules if self.chargeback else []


class Attribution(_Strict):
    """How line items are attributed."""

    dimensions: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_DIMENSIONS))
    runs: str | None = None
    shared: list[SharedRule] = Field(default_factory=list)
    commitments: Commitments = Field(default_factory=Commitments)

    @field_validator("dimensions")
    @classmethod
    def _all_dimensions(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        merged = {**DEFAULT_DIMENSIONS, **value}
        for dimension, keys in merged.items():
            if dimension not in DEFAULT_DIMENSIONS and not CUSTOM_DIMENSION_NAME.fullmatch(dimension):
                raise ValueError(
                    f"{dimension}: a dimension's name is lower-case letters, digits and `_`, starting with a letter"
                )
            if not keys:
                raise ValueError(f"{dimension}: give at least one tag key")
        return merged

    @property
    def custom_dimensions(self) -> list[str]:
        """The user's own dimensions (beyond training_run, experiment, dataset_version and owner),
        in the order the config lists them: the keys of cost_allocations.custom_dimensions."""
        return [dimension for dimension in self.dimensions if dimension not in DEFAULT_DIMENSIONS]

    @field_validator("shared")
    @classmethod
    def _unique_rule_names(cls, rules: list[SharedRule]) -> list[SharedRule]:
        duplicates = repeated([rule.name for rule in rules])
        if duplicates:
            raise ValueError(f"rule names must be unique, repeated: {', '.join(duplicates)}")
        return rules


class Waste(_Strict):
    """How the waste analysis recognizes checkpoint storage and inter-region transfer (`waste:`).

    Both are case-insensitive globs: `checkpoint_resources` on the ResourceId of storage lines,
    `inter_region_transfer` on the ChargeDescription of network lines.
    """

    checkpoint_resources: list[str] = Field(default_factory=lambda: list(DEFAULT_CHECKPOINT_RESOURCES))
    inter_region_transfer: list[str] = Field(default_factory=lambda: list(DEFAULT_INTER_REGION_TRANSFER))


class Orchestration(_Strict):
    """How the nightly run is scheduled and which warnings its checks raise (`orchestration:`)."""

    cron: str = "0 6 * * *"
    timezone: str = "UTC"
    freshness_max_age_hours: float = Field(default=72, gt=0)
    # The moment freshness is judged at instead of the clock: for a project of past exports (the
    # demo, an archive, a replay) whose newest charge can never be recent.
    freshness_as_of: datetime | None = None
    untagged_share_threshold: float = Field(default=0.25, ge=0, le=1)
    sensor_interval_seconds: int = Field(default=300, ge=30)
    maintenance_cron: str = "0 5 * * 0"  # weekly, Sunday 05:00
    snapshot_retention_days: int = Field(default=90, ge=1)

    @field_validator("cron", "maintenance_cron")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        fields = value.split()
        if len(fields) != 5:
            raise ValueError(f"{value!r} is not a cron expression of 5 fields (minute hour day month weekday)")
        return value

    @field_validator("freshness_as_of")
    @classmethod
    def _as_utc(cls, value: datetime | None) -> datetime | None:
        """The moment in UTC, without an offset (the warehouse's timestamps); no offset means UTC."""
        if value is None or value.tzinfo is None:
            return value
        return value.astimezone(UTC).replace(tzinfo=None)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
        return value


ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EMAIL_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")


def _env_var_name(value: str | None) -> str | None:
    if value is not None and not ENV_VAR_NAME.match(value):
        raise ValueError(f"{value!r} is not the name of an environment variable (letters, digits and _)")
    return value


def _email_address(value: str) -> str:
    if not EMAIL_ADDRESS.match(value):
        raise ValueError(f"{value!r} is not an email address like finops@example.com")
    return value


EnvVarName = Annotated[str, AfterValidator(_env_var_name)]
EmailAddress = Annotated[str, AfterValidator(_email_address)]


class _Destination(_Strict):
    """What every alert destination has: a unique name and, optionally, the owners whose runs'
    alerts it receives (every run's when left out)."""

    name: str = Field(min_length=1)
    owners: list[str] | None = Field(default=None, min_length=1)


class WebhookDestination(_Destination):
    """An HTTP endpoint taking a POST: `slack` (a Slack-compatible incoming webhook, `{"text": …}`)
    or `webhook` (the alert as a JSON object); its URL, a secret, is read from the environment."""

    kind: Literal["slack", "webhook"]
    url_env: EnvVarName


class SmtpDestination(_Destination):
    """Plain-text email over SMTP; the login, if any, is read from the environment."""

    kind: Literal["smtp"]
    host: str
    port: int = Field(default=587, gt=0, lt=65536)
    starttls: bool = False
    username_env: EnvVarName | None = None
    password_env: EnvVarName | None = None
    from_: EmailAddress = Field(alias="from")
    to: list[EmailAddress] = Field(min_length=1)

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        if not HOST.match(value):
            raise ValueError(f"{value!r} is not a host name or address")
        return value

    @model_validator(mode="after")
    def _login_pair(self) -> SmtpDestination:
        if (self.username_env is None) != (self.password_env is None):
            raise ValueError("give both `username_env` and `password_env`, or neither")
        return self


Destination = Annotated[WebhookDestination | SmtpDestination, Field(discriminator="kind")]


class Alerts(_Strict):
    """Where the alerts of `budget_alerts` are delivered (`alerts:`), and how hard each delivery
    is tried within one run."""

    destinations: list[Destination] = Field(default_factory=list)
    attempts: int = Field(default=3, ge=1, le=10)
    backoff_seconds: float = Field(default=2.0, ge=0, le=60)
    timeout_seconds: float = Field(default=10.0, gt=0, le=120)

    @field_validator("destinations")
    @classmethod
    def _unique_names(cls, destinations: list[Destination]) -> list[Destination]:
        duplicates = repeated([destination.name for destination in destinations])
        if duplicates:
            raise ValueError(f"destination names must be unique, repeated: {', '.join(duplicates)}")
        return destinations


def not_below(value: Decimal, lower: Decimal | None, lower_name: str) -> Decimal:
    """The one rule of an `over` level: at least its `warning` level (`lower`, None when that
    failed validation itself), else an error naming the warning key."""
    if lower is not None and value < lower:
        raise ValueError(f"must be at least {lower_name} ({lower}), got {value}")
    return value


class ThresholdLevels(_Strict):
    """A warning and an over level of one alert threshold kind, as fractions or multiples (the one rule
    of both `thresholds:` in runledger.yaml and a budget's `thresholds:`)."""

    warning: Decimal = Field(gt=0, lt=Decimal(10) ** 28)
    over: Decimal = Field(gt=0, lt=Decimal(10) ** 28)

    @field_validator("over")
    @classmethod
    def _over_at_least_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over, info.data.get("warning"), "warning")


class DailySpendAnomaly(ThresholdLevels):
    """A day far above the run's trailing median: the day's spend at `warning` (`over`) times the
    median daily spend of the `trailing_days` days before it, once `minimum_days` of them had spend."""

    warning: Decimal = Field(default=Decimal(3), gt=1, lt=Decimal(10) ** 28)
    over: Decimal = Field(default=Decimal(5), gt=1, lt=Decimal(10) ** 28)
    trailing_days: int = Field(default=7, ge=1, le=366)
    minimum_days: int = Field(default=3, ge=1, le=366)


class IdleGpus(_Strict):
    """GPU instances with spend and no run: warned at `warning_hours` charged hours, over at `over_hours`."""

    warning_hours: Decimal = Field(default=Decimal(6), gt=0, lt=Decimal(10) ** 28)
    over_hours: Decimal = Field(default=Decimal(24), gt=0, lt=Decimal(10) ** 28)

    @field_validator("over_hours")
    @classmethod
    def _over_at_least_warning(cls, over_hours: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over_hours, info.data.get("warning_hours"), "warning_hours")


class AlertThresholds(_Strict):
    """The thresholds besides cost (`thresholds:`), the defaults of every budget; a budget's own
    `thresholds:` overrides each kind. A kind left out here (gpu_hours, wall_clock, storage) takes
    each budget's cost fractions."""

    gpu_hours: ThresholdLevels | None = None
    wall_clock: ThresholdLevels | None = None
    storage: ThresholdLevels | None = None
    daily_spend_anomaly: DailySpendAnomaly = Field(default_factory=DailySpendAnomaly)
    idle_gpus: IdleGpus = Field(default_factory=IdleGpus)


LAKE_FOLDER = ".runledger/lake"
# Where an earlier RunLedger kept its warehouse file by default: found there, it is converted once
# by `runledger migrate`.
LEGACY_WAREHOUSE_FILE = ".runledger/warehouse.duckdb"
HOST = re.compile(r"^[A-Za-z0-9.\-]+$")
DATABASE_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


class PostgresCatalog(_Strict):
    """A DuckLake catalog in PostgreSQL; user and password come from libpq's environment
    (PGUSER, PGPASSWORD, ~/.pgpass), never from this file."""

    host: str
    port: int = Field(default=5432, gt=0, lt=65536)
    dbname: str

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        if not HOST.match(value):
            raise ValueError(f"{value!r} is not a host name or address")
        return value

    @field_validator("dbname")
    @classmethod
    def _dbname(cls, value: str) -> str:
        if not DATABASE_NAME.match(value):
            raise ValueError(f"{value!r} is not a database name (letters, digits, _ and -)")
        return value

    @property
    def connection_string(self) -> str:
        return f"host={self.host} port={self.port} dbname={self.dbname}"


class LakeCatalog(_Strict):
    """Where the lake's catalog lives: `postgres:` (team setup) or `sqlite:` (a file)."""

    postgres: PostgresCatalog | None = None
    sqlite: str | None = None

    @model_validator(mode="after")
    def _one_catalog(self) -> LakeCatalog:
        if (self.postgres is None) == (self.sqlite is None):
            raise ValueError("give exactly one of `postgres` or `sqlite`")
        return self


class TeamWarehouse(_Strict):
    """A lake whose catalog and data live apart: e.g. catalog in PostgreSQL, data in S3."""

    catalog: LakeCatalog
    data_path: str = Field(min_length=1)
    endpoint_url: str | None = None  # an S3-compatible store (or a test server), e.g. http://127.0.0.1:9000

    @field_validator("data_path")
    @classmethod
    def _folder(cls, value: str) -> str:
        if value.startswith("s3://") and not value[len("s3://") :].split("/", 1)[0]:
            raise ValueError("an s3:// data_path needs a bucket: s3://bucket/prefix/")
        return value if value.endswith("/") else value + "/"

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[A-Za-z0-9.\-]+(:\d+)?/?$", value):
            raise ValueError(f"{value!r} is not an endpoint URL like http://host:port")
        return value


def _warehouse_form(value: object) -> str | None:
    if isinstance(value, str):
        return "folder"
    return "team" if isinstance(value, dict | TeamWarehouse) else None


# `warehouse:` is a folder (the embedded lake) or a mapping (the team setup); an error names the
# key inside the mapping, not pydantic's attempts at both forms.
WarehouseSetting = Annotated[
    Annotated[str, Tag("folder")] | Annotated[TeamWarehouse, Tag("team")],
    Discriminator(
        _warehouse_form,
        custom_error_type="warehouse_form",
        custom_error_message="a folder (e.g. .runledger/lake) or a mapping with catalog and data_path",
    ),
]


class RunLedgerConfig(_Strict):
    """The whole `runledger.yaml`, with relative paths resolved against its folder."""

    base_dir: Path
    warehouse: WarehouseSetting = LAKE_FOLDER
    reports_dir: str = ".runledger/reports"
    sources: list[Source] = Field(default_factory=list)
    attribution: Attribution = Field(default_factory=Attribution)
    budgets: str | None = None
    cost_categories: str | None = None
    gpu_instance_types: dict[str, int] | str | None = None
    orchestration: Orchestration = Field(default_factory=Orchestration)
    waste: Waste = Field(default_factory=Waste)
    alerts: Alerts = Field(default_factory=Alerts)
    thresholds: AlertThresholds = Field(default_factory=AlertThresholds)

    @field_validator("gpu_instance_types", mode="before")
    @classmethod
    def _gpu_instance_types(cls, value: object) -> object:
        if value is None or isinstance(value, str):
            return value
        if not isinstance(value, dict):
            raise ValueError("a mapping of instance type to GPUs (e.g. {my-gpu-box: 8}), or a CSV file")
        for instance_type, gpus in value.items():
            if not isinstance(instance_type, str) or not instance_type.strip():
                raise ValueError(f"{instance_type!r}: an instance type is a non-empty text")
            if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus <= 0:
                raise ValueError(f"{instance_type}: {gpus!r} is not a positive whole number of GPUs")
        return value

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, sources: list[Source]) -> list[Source]:
        duplicates = repeated([source.name for source in sources])
        if duplicates:
            raise ValueError(f"source names must be unique, repeated: {', '.join(duplicates)}")
        return sources

    def relative(self, path: Path) -> str:
        """`path` as this file would name it: relative to its folder where it lies inside it."""
        try:
            return path.relative_to(self.base_dir).as_posix()
        except ValueError:
            return str(path)

    def resolve(self, path: str) -> Path:
        """Resolves a path of this file: relative paths are relative to the config's folder."""
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.base_dir / candidate

    @property
    def lake(self) -> Lake:
        """The lake this configuration names: a folder (SQLite catalog and data files in it), or
        a catalog and data path of their own."""
        if isinstance(self.warehouse, TeamWarehouse):
            return self._team_lake(self.warehouse)
        folder = self.resolve(self.warehouse)
        if folder.is_file():
            return Lake.in_folder(folder, legacy_file=folder)
        legacy = self.resolve(LEGACY_WAREHOUSE_FILE)
        default_lake = self.warehouse == LAKE_FOLDER
        return Lake.in_folder(
            folder, legacy_file=legacy if default_lake and legacy.is_file() and not folder.exists() else None
        )

    def _team_lake(self, warehouse: TeamWarehouse) -> Lake:
        catalog = warehouse.catalog
        data_path = warehouse.data_path
        if not data_path.startswith("s3://"):
            data_path = f"{self.resolve(data_path)}/"
        endpoint = urlparse(warehouse.endpoint_url) if warehouse.endpoint_url else None
        return Lake(
            catalog=(
                f"postgres:{catalog.postgres.connection_string}"
                if catalog.postgres
                else f"sqlite:{self.resolve(catalog.sqlite)}"
            ),
            data_path=data_path,
            state_dir=self.base_dir / ".runledger",
            s3_endpoint=endpoint.netloc if endpoint else None,
            s3_use_ssl=endpoint.scheme == "https" if endpoint else True,
        )

    @property
    def reports_path(self) -> Path:
        return self.resolve(self.reports_dir)

    @property
    def billing_sources(self) -> list[BillingSource]:
        return [
            s for s in self.sources if isinstance(s, AwsCurSource | GcpBillingSource | FocusSource | ManualCostsSource)
        ]

    @property
    def run_events_sources(self) -> list[RunEventsSource]:
        return [s for s in self.sources if isinstance(s, RunEventsSource)]

    @property
    def runs_path(self) -> Path | None:
        return self.resolve(self.attribution.runs) if self.attribution.runs else None

    @property
    def budgets_path(self) -> Path | None:
        return self.resolve(self.budgets) if self.budgets else None

    @property
    def cost_categories_path(self) -> Path | None:
        return self.resolve(self.cost_categories) if self.cost_categories else None

    def gpu_instance_table(self) -> dict[str, int]:
        """The configured GPUs per instance type (`gpu_instance_types:`): the mapping as given, or
        the rows of its CSV file (columns instance_type and gpus; others are ignored).

        Raises:
            ConfigError: the file lacks a column, or a row has no instance type or a gpus value
                that is not a positive whole number; the message names the file, row and column.
        """
        if not isinstance(self.gpu_instance_types, str):
            return dict(self.gpu_instance_types or {})
        path = self.resolve(self.gpu_instance_types)
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"instance_type", "gpus"} - set(reader.fieldnames or ())
            if missing:
                raise ConfigError(f"{path}: missing columns {', '.join(sorted(missing))}")
            table = {}
            for line, row in enumerate(reader, start=2):
                instance_type, gpus = (row["instance_type"] or "").strip(), (row["gpus"] or "").strip()
                if not instance_type:
                    raise ConfigError(f"{path}: row {line}: instance_type: give the instance type")
                if not gpus.isdigit() or int(gpus) == 0:
                    raise ConfigError(f"{path}: row {line}: gpus: {gpus!r} is not a positive whole number")
                table[instance_type] = int(gpus)
        return table


def default_config_path() -> Path:
    """`$RUNLEDGER_CONFIG`, else `./runledger.yaml` (read when called, never at import)."""
    return Path(os.environ.get(CONFIG_ENV_VAR) or DEFAULT_CONFIG_FILE)


def _key_path(location: tuple[int | str, ...], document: object = None) -> str:
    """`runs[1].weight`; an entry of a list with an `id` in `document` (the file as read) is named
    by it too: `runs[1] (id probe).weight`."""
    text = ""
    for item in location:
        if isinstance(item, int):
            document = document[item] if isinstance(document, list) and 0 <= item < len(document) else None
            entry_id = document.get("id") if isinstance(document, dict) else None
            text += f"[{item}] (id {entry_id})" if isinstance(entry_id, str) and entry_id else f"[{item}]"
        else:
            document = document.get(item) if isinstance(document, dict) else None
            text += f".{item}" if text else str(item)
    return text


def _source_kind_keys(location: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Drops pydantic's discriminator tag (`aws_cur`…) from an error location."""
    kinds = {
        "aws_cur",
        "gcp_billing",
        "focus",
        "manual_costs",
        "aws_tags",
        "run_events",
        "folder",
        "team",
        "slack",
        "webhook",
        "smtp",
    }
    return tuple(item for item in location if item not in kinds)


def format_validation_error(file: Path, error: ValidationError, document: object = None) -> str:
    """One line per problem: `file: key.path: message`, list entries named by their `id` in
    `document` (the file as read) when they have one."""
    lines = []
    for problem in error.errors():
        key = _key_path(_source_kind_keys(problem["loc"]), document) or "(top level)"
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = "unknown key (check its spelling against the README's configuration section)"
        lines.append(f"{file}: {key}: {message}")
    return "\n".join(lines)


def read_yaml(path: Path) -> object:
    """Parses a YAML file; a missing file or bad YAML is a `ConfigError` naming the file."""
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the file as UTF-8 text: {error}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}: {getattr(error, 'problem', error)}") from None


def load_config(path: Path | None = None) -> RunLedgerConfig:
    """Reads and validates `runledger.yaml` and checks that the files it names exist.

    Args:
        path: the config file; defaults to `$RUNLEDGER_CONFIG`, then `./runledger.yaml`.

    Raises:
        ConfigError: naming the file and key at fault.
    """
    path = (path or default_config_path()).resolve()
    document = read_yaml(path)
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys (warehouse, sources, …)")
    if "base_dir" in document:
        raise ConfigError(f"{path}: base_dir: unknown key")
    try:
        config = RunLedgerConfig.model_validate({**document, "base_dir": path.parent})
    except ValidationError as error:
        raise ConfigError(format_validation_error(path, error)) from None
    _check_paths_exist(path, config)
    _check_lake_folder(path, config)
    return config


def _check_paths_exist(file: Path, config: RunLedgerConfig) -> None:
    for index, source in enumerate(config.sources):
        local = None
        if isinstance(source, AwsCurSource) and source.is_local:
            local, key = source.uri, "uri"
        elif isinstance(source, GcpBillingSource | FocusSource | ManualCostsSource | RunEventsSource) and source.path:
            local, key = source.path, "path"
        if local is not None and not config.resolve(local).exists():
            raise ConfigError(f"{file}: sources[{index}].{key}: {config.resolve(local)} does not exist")
    for key, value in (
        ("attribution.runs", config.runs_path),
        ("budgets", config.budgets_path),
        ("cost_categories", config.cost_categories_path),
        (
            "gpu_instance_types",
            config.resolve(config.gpu_instance_types) if isinstance(config.gpu_instance_types, str) else None,
        ),
    ):
        if value is not None and not value.exists():
            raise ConfigError(f"{file}: {key}: {value} does not exist")
    config.gpu_instance_table()


def _check_lake_folder(file: Path, config: RunLedgerConfig) -> None:
    """Refuses a `warehouse:` folder that cannot hold a lake, before anything opens it: a file other
    than an earlier RunLedger's warehouse file, a path inside a file, a folder whose catalog is not
    SQLite."""
    if not isinstance(config.warehouse, str):
        return
    folder = config.resolve(config.warehouse)
    fix = "name the lake's folder (e.g. .runledger/lake), or a folder that does not exist yet"
    if folder.is_file():
        if not starts_with(folder, DUCKDB_HEADER):
            raise ConfigError(f"{file}: warehouse: {folder} is a file, not a lake: {fix}")
        return
    inside = next((parent for parent in folder.parents if parent.is_file()), None)
    if inside is not None:
        raise ConfigError(f"{file}: warehouse: {folder} lies inside the file {inside}: {fix}")
    catalog = folder / CATALOG_FILE
    if catalog.is_file() and catalog.stat().st_size and not starts_with(catalog, SQLITE_HEADER):
        raise ConfigError(f"{file}: warehouse: {folder} is not a lake: its {CATALOG_FILE} is not a SQLite file; {fix}")

"""`runledger.yaml`: loading, validation and path resolution. Each domain's settings are its own
(`pipelines/*/settings.py`); an entry of `sources:` is read by its kind's model (`pipelines/sources`).

Every problem is a `ConfigError` whose message names the file and the key at fault; the CLI
turns it into exit code 2.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from pydantic import Field, ValidationError, field_validator

from pipelines.attribution.settings import Attribution
from pipelines.budgets.settings import Alerts
from pipelines.config_file import read_config_document
from pipelines.config_rules import ConfigError, StrictModel, repeated, shorten
from pipelines.orchestration.settings import Orchestration
from pipelines.plans.settings import AlertThresholds
from pipelines.sources.kind import SourceSettings
from pipelines.sources.registry import KIND_NAMES, Source, kind_of
from pipelines.sources.run_events.settings import RunEventsSource
from pipelines.warehouse.lake import CATALOG_FILE, DUCKDB_HEADER, SQLITE_HEADER, Lake, starts_with
from pipelines.warehouse.settings import LAKE_FOLDER, LEGACY_WAREHOUSE_FILE, TeamWarehouse, WarehouseSetting
from pipelines.waste.settings import Waste


class RunLedgerConfig(StrictModel):
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
    def billing_sources(self) -> list[SourceSettings]:
        return [s for s in self.sources if kind_of(s).billing]

    @property
    def scheduler_sources(self) -> list[SourceSettings]:
        """The sources of usage intervals (`slurm`, `kubernetes`): read by the `cluster_usage` asset."""
        return [s for s in self.sources if kind_of(s).intervals is not None]

    @property
    def telemetry_sources(self) -> list[SourceSettings]:
        """The sources of GPU utilization (`prometheus`): read by the `gpu_utilization` asset."""
        return [s for s in self.sources if kind_of(s).telemetry is not None]

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
    kinds = {*KIND_NAMES, "folder", "team", "slack", "webhook", "smtp"}
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
        lines.append(f"{file}: {key}: {shorten(message)}")
    return "\n".join(lines)


def load_config(path: Path | None = None, *, writer: bool = False) -> RunLedgerConfig:
    """Reads and validates `runledger.yaml` and checks that the files it names exist.

    Args:
        path: the config file; defaults to `$RUNLEDGER_CONFIG`, then `./runledger.yaml`.
        writer: the caller writes the lake: its folders must be writable by this process.

    Raises:
        ConfigError: naming the file and key at fault.
    """
    return config_from_document(*read_config_document(path), writer=writer)


def config_from_document(path: Path, document: dict, *, writer: bool = False) -> RunLedgerConfig:
    """The configuration of `runledger.yaml` as `read_config_document` read it, validated, the
    files it names checked to exist.

    Args:
        path: the config file (resolved).
        document: its top-level mapping.
        writer: the caller writes the lake: its folders must be writable by this process.

    Raises:
        ConfigError: naming the file and key at fault.
    """
    try:
        config = RunLedgerConfig.model_validate({**document, "base_dir": path.parent})
    except ValidationError as error:
        raise ConfigError(format_validation_error(path, error)) from None
    _check_paths_exist(path, config)
    _check_lake_folder(path, config)
    if writer:
        _check_lake_writable(path, config)
    return config


def _check_paths_exist(file: Path, config: RunLedgerConfig) -> None:
    for index, source in enumerate(config.sources):
        local = source.local_path()
        if local is not None and not config.resolve(local[1]).exists():
            raise ConfigError(f"{file}: sources[{index}].{local[0]}: {config.resolve(local[1])} does not exist")
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


def _check_lake_writable(file: Path, config: RunLedgerConfig) -> None:
    """Refuses, before a writer opens the lake, a lake this process may not write: the embedded
    lake's folder, data folder and catalog (or the nearest folder that exists, where the writer
    would create them) and the state folder (lock, staging, spill), each tried as the writer
    would use it (for a warehouse file of an earlier RunLedger: the lake `runledger migrate` writes)."""
    lake = config.lake.migration_target
    folders = [lake.state_dir]
    if lake.sqlite_file is not None:
        folders += [lake.sqlite_file.parent, Path(lake.data_path)]
    probes = [next(candidate for candidate in (folder, *folder.parents) if candidate.exists()) for folder in folders]
    if lake.sqlite_file is not None and lake.sqlite_file.is_file():
        probes.append(lake.sqlite_file)
    for probe in probes:
        try:
            if probe.is_file():
                probe.open("r+b").close()
            else:
                tempfile.TemporaryFile(dir=probe).close()
        except OSError as error:
            raise ConfigError(
                f"{file}: warehouse: {probe}: this user may not write there ({error.strerror}); "
                "give the lake a folder RunLedger may write, or let this user write it"
            ) from None

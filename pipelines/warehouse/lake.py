"""The lake: a DuckLake catalog (a SQLite file, or PostgreSQL) and its Parquet data files (a local
folder, or S3), attached to an in-memory DuckDB as `lake`.

DuckDB's extensions come as Python packages (`duckdb-extension-*`), so nothing is downloaded:
each is installed once from its package's file into RunLedger's own extension folder (DuckDB's
`INSTALL '<file>'`), then loaded by name; DuckDB itself installs and loads nothing.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import duckdb

LAKE = "lake"
CATALOG_FILE = "catalog.sqlite"
DATA_FOLDER = "data"
# A configuration that names a warehouse file of an earlier RunLedger gets its lake beside the
# file, in this folder.
LEGACY_LAKE_FOLDER = "lake"
# How a file starts, as (offset, bytes): a DuckDB database (an earlier RunLedger's warehouse file)
# and a SQLite database (an embedded lake's catalog).
DUCKDB_HEADER = (8, b"DUCK")
SQLITE_HEADER = (0, b"SQLite format 3\x00")
# How long a statement waits for the SQLite catalog while another process commits, in ms.
SQLITE_BUSY_TIMEOUT_MS = 60_000
# The DuckDB extension each part of a lake needs, and the Python package that ships it.
EXTENSION_PACKAGES = {
    "ducklake": "duckdb_extension_ducklake",
    "sqlite_scanner": "duckdb_extension_sqlite",
    "postgres_scanner": "duckdb_extension_postgres",
    "httpfs": "duckdb_extension_httpfs",
    "aws": "duckdb_extension_aws",
}
# Settings every connection starts with: Python variables are never visible to SQL (a name in a
# query is a table or view of the lake), DuckDB neither downloads nor loads extensions by itself.
# (Persistent secrets stay allowed: the postgres extension looks its connection up among them, and
# RunLedger itself only ever creates temporary ones.)
BASE_SETTINGS = {
    "python_enable_replacements": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}


class LakeError(RuntimeError):
    """The lake cannot be opened as configured; the message says what to do (exit 2)."""


def starts_with(path: Path, header: tuple[int, bytes]) -> bool:
    """Whether the file holds `header` (offset, bytes) where that kind of file has it."""
    offset, expected = header
    with path.open("rb") as file:
        file.seek(offset)
        return file.read(len(expected)) == expected


@dataclass(frozen=True)
class Lake:
    """Where a lake lives.

    Attributes:
        catalog: the DuckLake catalog after `ducklake:`: `sqlite:<file>` or `postgres:<libpq
            connection string>` (host, port, dbname; user and password come from libpq's
            environment, PGUSER/PGPASSWORD or ~/.pgpass, never from here).
        data_path: the data files' folder, ending with `/`: a local path or `s3://bucket/prefix/`.
        state_dir: the local folder for what is not the lake: the writers' lock, staging files,
            the download cache, DuckDB's spill space.
        s3_endpoint: `host:port` of an S3-compatible store (None: AWS's own endpoints).
        s3_use_ssl: whether that endpoint speaks HTTPS.
        legacy_file: a warehouse file of an earlier RunLedger found where the lake belongs, to be
            converted once by `runledger migrate`.
    """

    catalog: str
    data_path: str
    state_dir: Path
    s3_endpoint: str | None = None
    s3_use_ssl: bool = True
    legacy_file: Path | None = None

    @classmethod
    def in_folder(cls, folder: Path, *, legacy_file: Path | None = None) -> Lake:
        """The embedded lake: `<folder>/catalog.sqlite` and `<folder>/data/`."""
        folder = folder.absolute()
        return cls(
            catalog=f"sqlite:{folder / CATALOG_FILE}",
            data_path=f"{folder / DATA_FOLDER}/",
            state_dir=folder.parent,
            legacy_file=legacy_file,
        )

    @property
    def sqlite_file(self) -> Path | None:
        """The catalog file of an embedded lake (None for a PostgreSQL catalog)."""
        return Path(self.catalog.removeprefix("sqlite:")) if self.catalog.startswith("sqlite:") else None

    @property
    def on_s3(self) -> bool:
        return self.data_path.startswith("s3://")

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extensions the lake needs, in the order they load."""
        catalog = "sqlite_scanner" if self.sqlite_file else "postgres_scanner"
        return ("ducklake", catalog, *(("httpfs", "aws") if self.on_s3 else ()))

    @property
    def spill_dir(self) -> Path:
        return self.state_dir / "spill"

    @property
    def staging_dir(self) -> Path:
        return self.state_dir / "staging"

    @property
    def cache_dir(self) -> Path:
        return self.state_dir / "cache"

    def exists(self) -> bool:
        """Whether the catalog was created (always assumed for PostgreSQL: attaching says)."""
        return self.sqlite_file is None or self.sqlite_file.is_file()

    @property
    def migration_target(self) -> Lake:
        """Where `runledger migrate` writes this lake's legacy file: the lake itself, or, when the
        configuration names the file, a lake folder beside it."""
        names_the_file = self.sqlite_file is not None and self.sqlite_file.parent == self.legacy_file
        if self.legacy_file is not None and names_the_file:
            return Lake.in_folder(self.legacy_file.parent / LEGACY_LAKE_FOLDER)
        return replace(self, legacy_file=None)

    def describe(self) -> str:
        """The lake as a message names it."""
        if self.sqlite_file:
            return f"the lake {self.sqlite_file.parent}"
        return f"the lake with catalog {self.catalog} and data {self.data_path}"


def extension_directory() -> Path:
    """RunLedger's own DuckDB extension folder: `$XDG_CACHE_HOME/runledger/duckdb-extensions`
    (`~/.cache/…` by default), read when called."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "runledger" / "duckdb-extensions"


def _packaged_file(extension: str) -> Path:
    package = EXTENSION_PACKAGES[extension]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LakeError(f"the DuckDB extension {extension} is not installed: pip install the package {package}")
    files = sorted(
        Path(next(iter(spec.submodule_search_locations))).glob(f"extensions/v{duckdb.__version__}/*.duckdb_extension")
    )
    if not files:
        raise LakeError(f"the package {package} holds no {extension} extension for DuckDB {duckdb.__version__}")
    return files[0]


def sql_literal(text: str) -> str:
    """`text` as a SQL string literal. Only for the statements DuckDB gives no parameters
    (ATTACH, INSTALL): paths and catalog addresses from the configuration, never data."""
    if "\x00" in text:
        raise LakeError(f"{text!r}: a NUL character cannot be part of a path or address")
    return "'" + text.replace("'", "''") + "'"


def _installed(conn: duckdb.DuckDBPyConnection) -> set[str]:
    rows = conn.execute("select extension_name from duckdb_extensions() where installed").fetchall()
    return {name for (name,) in rows}


def _install_missing(conn: duckdb.DuckDBPyConnection, extensions: tuple[str, ...]) -> None:
    installed = _installed(conn)
    for extension in extensions:
        if extension not in installed:
            conn.execute(f"install {sql_literal(str(_packaged_file(extension)))}")


def _duckdb(settings: dict[str, object]) -> duckdb.DuckDBPyConnection:
    extensions = extension_directory()
    try:
        extensions.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LakeError(
            f"cannot create DuckDB's extension folder {extensions}: {error.strerror}; set XDG_CACHE_HOME to a "
            "folder this user may write (the extensions are installed there once, from their packages)"
        ) from None
    return duckdb.connect(":memory:", config={**BASE_SETTINGS, "extension_directory": str(extensions), **settings})


def install_extensions(lake: Lake) -> None:
    """Installs the extensions the lake needs that are not installed yet, from their packages (for
    a process that will load them but may not write: `runledger query`'s confined child)."""
    conn = _duckdb({})
    try:
        _install_missing(conn, lake.extensions)
    finally:
        conn.close()


def open_duckdb(lake: Lake, settings: dict[str, object]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the lake's extensions loaded and, for S3, its endpoint and the
    standard AWS credential chain (environment, config files, instance role) set."""
    conn = _duckdb(settings)
    _install_missing(conn, lake.extensions)
    for extension in lake.extensions:
        conn.execute(f"load {extension}")
    if lake.on_s3:
        # The credentials: the standard AWS chain (environment, config files, instance role), read
        # by the aws extension. A secret's options are literals (CREATE SECRET takes no
        # parameters): the endpoint comes from the validated configuration.
        options = ["type s3", "provider credential_chain", f"use_ssl {str(lake.s3_use_ssl).lower()}"]
        if lake.s3_endpoint:
            options += [f"endpoint {sql_literal(lake.s3_endpoint)}", "url_style 'path'"]
        conn.execute(f"create or replace secret lake_s3 ({', '.join(options)})")
    return conn


def attach(conn: duckdb.DuckDBPyConnection, lake: Lake, *, read_only: bool, at: int | datetime | None = None) -> None:
    """Attaches the lake as `lake` and makes it the connection's default catalog.

    Args:
        conn: from `open_duckdb`.
        lake: the lake.
        read_only: a reader's attachment.
        at: a snapshot id or a moment: the lake as it was then (read-only).
    """
    # Every row goes to the data files: DuckLake 1.5.5 writes small inserts into the catalog
    # ("inlining") in a form it cannot read back for structs holding dates (budget windows).
    options = [f"data_path {sql_literal(lake.data_path)}", "data_inlining_row_limit 0"]
    if lake.sqlite_file:
        # An embedded lake's data live in its folder wherever the folder is: a moved or copied
        # project reads its own data files, not those of the path the catalog was created at.
        options += [f"meta_busy_timeout {SQLITE_BUSY_TIMEOUT_MS}", "override_data_path true"]
        if not (read_only or at is not None):
            # Write-ahead logging: a reader's open transaction never blocks a writer's commit
            # (the catalog file keeps the mode; readers, who may not write, do not set it).
            options.append("meta_journal_mode 'wal'")
    if read_only or at is not None:
        options.append("read_only")
    if isinstance(at, int):
        options.append(f"snapshot_version {at:d}")
    elif isinstance(at, datetime):
        options.append(f"snapshot_time {sql_literal(at.isoformat(sep=' '))}")
    conn.execute(f"attach {sql_literal('ducklake:' + lake.catalog)} as {LAKE} ({', '.join(options)})")
    conn.execute(f"use {LAKE}")

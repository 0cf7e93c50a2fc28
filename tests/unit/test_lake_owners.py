"""The configuration that owns a lake (`lake_owners`): recorded by the first writer, refused to
another, handed over on purpose."""

from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse.lake import Lake, LakeError
from pipelines.warehouse.owners import claim_lake, configuration_of
from pipelines.warehouse.sql import read_sql


@pytest.fixture
def catalog() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    conn.execute(read_sql("schema/lake_owners"))
    return conn


def owners(conn: duckdb.DuckDBPyConnection) -> list[tuple]:
    return conn.execute("select source_name, configuration from lake_owners order by all nulls first").fetchall()


def test_the_first_writer_owns_the_lake_and_its_sources_and_another_is_refused(
    tmp_path: Path, catalog: duckdb.DuckDBPyConnection
) -> None:
    lake = Lake.in_folder(tmp_path / "shared" / "lake")
    first, second = tmp_path / "a" / "runledger.yaml", tmp_path / "b" / "runledger.yaml"
    claim_lake(catalog, lake, first, ["az-a"], take_over=False)
    claim_lake(catalog, lake, first, ["az-a", "gcp"], take_over=False)  # a source added later is its too
    assert owners(catalog) == [
        (None, "../../a/runledger.yaml"),
        ("az-a", "../../a/runledger.yaml"),
        ("gcp", "../../a/runledger.yaml"),
    ]
    with pytest.raises(LakeError, match=f"belongs to the configuration {first} .* not {second}: two configurations"):
        claim_lake(catalog, lake, second, ["az-b"], take_over=False)
    claim_lake(catalog, lake, second, ["az-b"], take_over=True)
    assert owners(catalog) == [(None, "../../b/runledger.yaml"), ("az-b", "../../b/runledger.yaml")]
    with pytest.raises(LakeError, match=f"belongs to the configuration {second} "):
        claim_lake(catalog, lake, first, ["az-a"], take_over=False)


def test_an_embedded_lake_names_its_owner_relative_to_itself_and_a_team_lake_absolutely(tmp_path: Path) -> None:
    config = tmp_path / "project" / "runledger.yaml"
    assert (
        configuration_of(config, Lake.in_folder(tmp_path / "project" / ".runledger" / "lake")) == "../../runledger.yaml"
    )
    team = Lake(catalog="postgres:host=db dbname=lake", data_path="s3://lake/data/", state_dir=tmp_path)
    assert configuration_of(config, team) == str(config)

"""Registry overlaps and contradictions reported by `runledger check`; glob intersection checked
against DuckDB's own GLOB."""

from datetime import datetime
from itertools import product
from pathlib import Path

import duckdb
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.attribution.overlaps import common_match, registry_overlaps
from pipelines.attribution.registry import RegisteredRun
from pipelines.cli import main

GLOB_PIECES = ["a", "b", "-", "*", "?", "[ab]", "[!a]", "[0-9]", "1"]
SHORT_IDS = ["".join(chars) for size in range(5) for chars in product("ab-1x", repeat=size)]


# DuckDB's GLOB is the oracle: it is what attribution matches ResourceId with.
GLOB = duckdb.connect()
GLOB.execute("create table short_ids as select unnest($ids) as id", {"ids": SHORT_IDS})


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(GLOB_PIECES), max_size=4).map("".join),
    st.lists(st.sampled_from(GLOB_PIECES), max_size=4).map("".join),
)
def test_common_match_agrees_with_duckdb_glob(first: str, second: str) -> None:
    example = common_match(first, second)
    if example is not None:
        assert GLOB.execute(
            "select $id glob $first and $id glob $second", {"id": example, "first": first, "second": second}
        ).fetchone() == (True,)
    else:
        both = GLOB.execute(
            "select count(*) from short_ids where id glob $first and id glob $second",
            {"first": first, "second": second},
        ).fetchone()[0]
        assert both == 0


def test_overlapping_claims_are_found_with_their_common_window() -> None:
    runs = [
        RegisteredRun(
            id="pt",
            start=datetime(2026, 10, 3),
            end=datetime(2026, 10, 10),
            resources=["i-0eval*", "ckpt-7b"],
            weight=2,
        ),
        RegisteredRun(id="ft", start=datetime(2026, 10, 8), resources=["i-0eval01"], weight=1),
        RegisteredRun(id="later", start=datetime(2026, 10, 10), end=datetime(2026, 10, 12), resources=["i-0eval*"]),
        RegisteredRun(id="elsewhere", resources=["ckpt-13b", "i-1*"]),
    ]
    found = registry_overlaps(runs)
    assert [(o.first.id, o.second.id, o.example_resource, o.start, o.end) for o in found] == [
        ("pt", "ft", "i-0eval01", datetime(2026, 10, 8), datetime(2026, 10, 10)),
        ("ft", "later", "i-0eval01", datetime(2026, 10, 10), datetime(2026, 10, 12)),
    ]
    assert "split by weight 2:1" in found[0].describe()


def test_check_reports_overlaps_and_contradictions(tmp_path: Path) -> None:
    (tmp_path / "runs.yaml").write_text(
        "runs:\n  - {id: pt, resources: ['i-0eval*'], weight: 2}\n  - {id: ft, resources: ['i-0eval0?'], weight: 1}\n"
    )
    (tmp_path / "runledger.yaml").write_text(
        "attribution:\n  runs: runs.yaml\n  shared:\n"
        "    - {name: sp, match: {ChargeCategory: Purchase}, split: fixed, weights: {pt: 0.5, typo-run: 0.5}}\n"
    )
    result = CliRunner().invoke(main, ["check", "--config", str(tmp_path / "runledger.yaml")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "2 registered runs" in lines[0] and "1 shared-cost rules" in lines[0]
    assert lines[1:] == [
        (
            "registry overlap: runs pt ('i-0eval*') and ft ('i-0eval0?') both claim resources such as 'i-0eval00' "
            "from the beginning to open end; their lines are split by weight 2:1"
        ),
        (
            "registry contradiction: attribution.shared[0].weights: typo-run is not in the run registry "
            "(its share is attributed to that id all the same)"
        ),
    ]

"""Registry overlaps and contradictions reported by `runledger check`: only on resources the loaded
data has, matched by DuckDB's GLOB as attribution matches them."""

from datetime import datetime
from pathlib import Path

import duckdb
from click.testing import CliRunner

from pipelines.attribution.overlaps import registry_overlaps, registry_resources
from pipelines.attribution.registry import RegisteredRun
from pipelines.cli import main


def test_the_globs_match_the_resources_of_line_items_and_tag_snapshots() -> None:
    conn = duckdb.connect()
    conn.execute(
        "create table focus_line_items as select unnest(['i-0eval01', 'i-0eval02', 'ckpt-7b', null]) as ResourceId"
    )
    conn.execute("create table resource_tag_snapshots as select unnest(['i-0eval03']) as resource_key")
    runs = [
        RegisteredRun(id="pt", resources=["i-0eval*", "ckpt-7b"]),
        RegisteredRun(id="ft", resources=["i-0eval0[13]", "i-1*"]),
    ]
    assert registry_resources(conn, runs) == {
        "ckpt-7b": ["ckpt-7b"],
        "i-0eval*": ["i-0eval01", "i-0eval02", "i-0eval03"],
        "i-0eval0[13]": ["i-0eval01", "i-0eval03"],
    }


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
    matched = {"i-0eval*": ["i-0eval01", "i-0eval02"], "i-0eval01": ["i-0eval01"], "ckpt-7b": ["ckpt-7b"]}
    found = registry_overlaps(runs, matched)
    assert [(o.first.id, o.second.id, o.example_resource, o.start, o.end) for o in found] == [
        ("pt", "ft", "i-0eval01", datetime(2026, 10, 8), datetime(2026, 10, 10)),
        ("ft", "later", "i-0eval01", datetime(2026, 10, 10), datetime(2026, 10, 12)),
    ]
    assert "split by weight 2:1" in found[0].describe()
    # globs that could share an id no resource has split nothing: no news
    assert registry_overlaps(runs, {"i-0eval*": ["i-0eval02"], "i-0eval01": []}) == []


def test_check_reports_contradictions_and_no_overlap_before_any_data(tmp_path: Path) -> None:
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
    # no lake yet: no resource is known to be claimed twice, so no overlap is reported
    assert lines[1:] == [
        (
            "registry contradiction: attribution.shared[0].weights: typo-run is not in the run registry "
            "(its share is attributed to that id all the same)"
        ),
    ]

"""The `runledger` command line in process, where no lake is needed: exit 2 and one `error:` line for
what the user must fix (the command or runledger.yaml), help and version."""

from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pipelines.cli import main

PERIOD_FORMS = "give YYYY-MM (e.g. 2026-11) or its Dagster partition key YYYY-MM-01 (e.g. 2026-11-01)"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "runledger.yaml"
    path.write_text("sources: []\n")
    return path


@pytest.mark.parametrize("period", ["abc", "2026-13", "2026-00", "2026-11-15", "2026-1", "26-11"])
def test_a_period_of_another_form_is_a_usage_error_naming_the_value_and_the_forms(config: Path, period: str) -> None:
    code, output = invoke("run", "--config", str(config), "--period", "2026-11", "--period", period)
    assert (code, output) == (2, f"error: --period {period!r} is not a billing period: {PERIOD_FORMS}\n")


@pytest.mark.parametrize("period", ["2019-12", "2019-12-01", "2999-01"])
def test_a_period_without_a_partition_is_a_usage_error_naming_the_partitions(config: Path, period: str) -> None:
    last = f"{datetime.now(UTC):%Y-%m}"
    code, output = invoke("run", "--config", str(config), "--period", period)
    assert code == 2
    assert output == (
        f"error: --period {period}: billing period {period[:7]} is outside the billing periods RunLedger loads, "
        f"2020-01 to {last} (the monthly Dagster partitions)\n"
    )


def test_a_query_that_does_not_parse_is_a_usage_error_on_one_line(config: Path) -> None:
    code, output = invoke("query", "--config", str(config), "selec 1")
    syntax_error = 'Parser Error: syntax error at or near "selec" LINE 1: selec 1 ^'
    assert (code, output) == (2, f"error: query failed: {syntax_error}\n")


def test_a_query_of_several_statements_is_refused(config: Path) -> None:
    code, output = invoke("query", "--config", str(config), "select 1; select 2")
    assert (code, output) == (2, "error: runledger query runs exactly one statement; got 2 (run them one at a time)\n")


FIX = "name the lake's folder (e.g. .runledger/lake), or a folder that does not exist yet"


def _text_file(base: Path) -> tuple[str, str]:
    (base / "notes.txt").write_text("not a lake\n")
    return "notes.txt", f"{base / 'notes.txt'} is a file, not a lake: {FIX}"


def _inside_a_file(base: Path) -> tuple[str, str]:
    (base / "notes.txt").write_text("not a lake\n")
    return "notes.txt/lake", f"{base / 'notes.txt' / 'lake'} lies inside the file {base / 'notes.txt'}: {FIX}"


def _folder_with_another_catalog(base: Path) -> tuple[str, str]:
    (base / "archive").mkdir()
    (base / "archive" / "catalog.sqlite").write_text("not a database\n")
    return "archive", f"{base / 'archive'} is not a lake: its catalog.sqlite is not a SQLite file; {FIX}"


@pytest.mark.parametrize(
    "command", [["run"], ["repair"], ["query", "select 1"], ["report", "--all"], ["migrate"], ["check"]]
)
@pytest.mark.parametrize("warehouse", [_text_file, _inside_a_file, _folder_with_another_catalog])
def test_a_warehouse_that_cannot_hold_a_lake_is_a_configuration_error(
    tmp_path: Path, command: list[str], warehouse: object
) -> None:
    setting, problem = warehouse(tmp_path)
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {setting}\n")
    code, output = invoke(command[0], "--config", str(config), *command[1:])
    assert (code, output) == (2, f"error: {config}: warehouse: {problem}\n")


def test_version_prints_the_package_version() -> None:
    assert invoke("--version") == (0, f"runledger {version('runledger')}\n")


@pytest.mark.parametrize("command", [[], *([name] for name in main.commands)])
def test_h_is_help_on_the_group_and_every_command(command: list[str]) -> None:
    code, output = invoke(*command, "-h")
    assert code == 0
    assert output.startswith(f"Usage: main {' '.join(command)}".rstrip() + " [OPTIONS]")
    assert "-h, --help" in output
    assert (code, output) == invoke(*command, "--help")


def test_every_command_and_option_has_help_text() -> None:
    missing = [
        f"{name} {param.name}"
        for name, command in main.commands.items()
        for param in command.params
        if isinstance(param, click.Option) and not param.help
    ]
    assert missing == []
    assert all(command.help for command in main.commands.values())

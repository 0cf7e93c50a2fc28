"""The `runledger` command line in process, where no lake is needed: exit 2 and one `error:` line for
what the user must fix (the command or runledger.yaml), help and version."""

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.support import REPO

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


# a "billion laughs": nine levels of nine aliases, 9^9 strings once written out
YAML_BOMB = 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + "".join(
    f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]\n" for level in range(1, 9)
)
BOMB_REFUSED = "refused (line 7): its aliases expand to more than 1,000,000 values; write the values out"


# each file RunLedger reads as YAML, with the runledger.yaml that names it
BOMBED_PROJECTS = {
    "runledger.yaml": "",
    "runs.yaml": "attribution: {runs: runs.yaml}\n",
    "budgets/r1.yaml": "attribution: {runs: runs.yaml}\nbudgets: budgets\n",
    "costs.yaml": "sources:\n  - {name: labour, kind: manual_costs, path: costs.yaml}\n",
}


def _bombed_project(base: Path, bombed: str) -> Path:
    """A project whose runledger.yaml names `bombed`, the YAML bomb in it."""
    (base / "budgets").mkdir()
    files = {
        "runledger.yaml": BOMBED_PROJECTS[bombed],
        "runs.yaml": "runs:\n  - id: r1\n",
        "budgets/r1.yaml": "training_run: r1\n",
        "costs.yaml": "- {date: 2026-11-02, cost_category: labor, amount: '5', currency: USD}\n",
    }
    for name, text in files.items():
        # a manual cost file is a list: the bomb is its first entry's keys
        bomb = "- " + YAML_BOMB.strip().replace("\n", "\n  ") + "\n" if name == "costs.yaml" else YAML_BOMB
        # a budget's run the bomb itself: its error quoted the whole value, written out
        bombed_text = bomb + text.replace("training_run: r1", "training_run: *a8")
        (base / name).write_text(bombed_text if name == bombed else text)
    return base / "runledger.yaml"


@pytest.mark.parametrize(
    ("bombed", "command"),
    [
        *((file, command) for file in BOMBED_PROJECTS for command in (["check"], ["run"])),
        ("budgets/r1.yaml", ["estimate", "budgets/r1.yaml"]),
    ],
)
def test_a_yaml_bomb_in_any_file_is_refused_at_once_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bombed: str, command: list[str]
) -> None:
    config = _bombed_project(tmp_path, bombed)
    monkeypatch.chdir(tmp_path)
    config_option = [] if command[0] == "estimate" else ["--config", str(config)]
    started = time.monotonic()
    code, output = invoke(command[0], *config_option, *command[1:])
    assert time.monotonic() - started < 20
    named = Path(bombed) if command[0] == "estimate" else tmp_path / bombed
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert (code, len(errors)) == (2, 1), output
    assert errors[0].endswith(f"{named}: {BOMB_REFUSED}")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: &a [1, *a]\n", "refused (line 1): an alias refers to a list or mapping that contains it"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", "refused (line 1): lists and mappings nested more than 64 deep"),
        ("a: &a 1\n" + "".join(f"b{n}: *a\n" for n in range(101)), "refused (line 102): more than 100 aliases (*name)"),
    ],
)
def test_yaml_past_a_limit_is_refused_naming_the_line(tmp_path: Path, text: str, problem: str) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text(text)
    assert invoke("check", "--config", str(config)) == (2, f"error: {config}: {problem}\n")


def test_a_value_in_an_error_is_quoted_as_a_short_excerpt(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("budgets: budgets\n")
    (tmp_path / "budgets").mkdir()
    (tmp_path / "budgets" / "r1.yaml").write_text(f"training_run: [{'x' * 100_000}]\n")
    code, output = invoke("check", "--config", str(config))
    assert code == 2
    assert output.splitlines()[0] == (
        f"error: {tmp_path / 'budgets' / 'r1.yaml'}: training_run: input should be a valid string, "
        f"got ['{'x' * 17}...{'x' * 18}']"
    )


AT_FORMS = "is neither a snapshot id (e.g. 42) nor a moment (e.g. 2026-11-30T06:00:00Z)"


@pytest.mark.parametrize("at", ["²", "٣", "", " 3", "3\n"])
@pytest.mark.parametrize("command", [["query", "select 1"], ["report", "--all", "--out", "old"]])
def test_at_takes_ascii_digits_or_a_moment_only(config: Path, command: list[str], at: str) -> None:
    code, output = invoke(command[0], "--config", str(config), "--at", at, *command[1:])
    assert (code, output) == (2, f"error: --at {at!r} {AT_FORMS}\n")


def test_an_empty_config_is_refused_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    for text in ("", "# nothing yet\n", "{}\n"):
        config.write_text(text)
        for command in ("check", "run"):
            assert invoke(command, "--config", str(config)) == (
                2,
                (
                    f"error: {config}: the file is empty: name the billing exports under `sources:` "
                    "(docs/configuration.md; `runledger demo` writes a complete example)\n"
                ),
            )


@pytest.mark.parametrize(
    ("amount", "problem"),
    [('" 5 "', "' 5 ' has blanks around it"), ("٣", "'٣' is not a decimal number"), ("5²", "'5²' is not a decimal")],
)
def test_a_manual_amount_is_ascii_digits_without_blanks(tmp_path: Path, amount: str, problem: str) -> None:
    costs = tmp_path / "costs.csv"
    costs.write_text(f"date,cost_category,amount,currency\n2026-11-02,labor,{amount},USD\n")
    config = tmp_path / "runledger.yaml"
    config.write_text("sources:\n  - {name: labour, kind: manual_costs, path: costs.csv}\n")
    code, output = invoke("check", "--config", str(config))
    assert code == 1
    assert output.startswith(f"error: source labour: {costs}, row 1, column amount: {problem}")


def _unwritable(folder: Path) -> None:
    """Makes `folder` a folder nobody may write: immutable for root (who may write any folder
    whatever its mode), read-only for anyone else."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)


def _writable_again(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o755)


def test_a_lake_folder_nobody_may_write_is_a_configuration_error_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("warehouse: shared/lake\n")
    _unwritable(tmp_path / "shared")
    try:
        for command in ("run", "migrate"):
            code, output = invoke(command, "--config", str(config))
            assert (code, output.splitlines()[-1]) == (
                2,
                (
                    f"error: {config}: warehouse: {tmp_path / 'shared'}: this user may not write there "
                    f"({'Operation not permitted' if os.geteuid() == 0 else 'Permission denied'}); give the lake a "
                    "folder RunLedger may write, or let this user write it"
                ),
            )
    finally:
        _writable_again(tmp_path / "shared")


def test_a_home_nobody_may_write_is_named_with_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Path
) -> None:
    home = tmp_path / "home"
    _unwritable(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    (config.parent / ".runledger" / "lake").mkdir(parents=True)
    (config.parent / ".runledger" / "lake" / "catalog.sqlite").touch()
    try:
        code, output = invoke("query", "--config", str(config), "select 1")
    finally:
        _writable_again(home)
    assert (code, output) == (
        2,
        (
            f"error: cannot create DuckDB's extension folder {home / '.cache' / 'runledger' / 'duckdb-extensions'}: "
            f"{'Operation not permitted' if os.geteuid() == 0 else 'Permission denied'}; set XDG_CACHE_HOME to a "
            "folder this user may write (the extensions are installed there once, from their packages)\n"
        ),
    )


def test_migrate_refuses_another_applications_duckdb_file_and_converts_nothing(tmp_path: Path) -> None:
    import duckdb

    other = tmp_path / "orders.duckdb"
    with duckdb.connect(str(other)) as conn:
        conn.execute("create table orders (id integer)")
    config = tmp_path / "runledger.yaml"
    config.write_text("warehouse: orders.duckdb\n")
    assert invoke("migrate", "--config", str(config)) == (
        2,
        (
            f"error: {other} is not a warehouse file of an earlier RunLedger: it has no focus_line_items table (its "
            "tables: orders); nothing was converted: point `warehouse:` at RunLedger's lake folder\n"
        ),
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["orders.duckdb", "runledger.yaml"]


# The runledger command run in a fresh interpreter, then which heavy modules it imported.
IMPORTS_PROBE = """
import sys
from pipelines.cli import main
try:
    main(sys.argv[1:], prog_name="runledger")
except SystemExit as stop:
    heavy = ("dagster", "polars", "pyarrow", "pydantic", "duckdb")
    print("exit", stop.code, sorted(m for m in heavy if m in sys.modules))
"""
# What reading and validating runledger.yaml imports: its settings models, and DuckDB for the
# warehouse's column names.
CONFIG_MODULES = "['duckdb', 'pydantic']"


@pytest.mark.parametrize(
    ("command", "message", "imported"),
    [
        (["run", "--period", "abc"], "is not a billing period", "[]"),
        # a period is read before the configuration, which is read before anything else
        (["run", "--period", "2026-13", "--config", "missing.yaml"], "is not a billing period", "[]"),
        (["run", "--config", "missing.yaml"], "missing.yaml: file not found", "[]"),
        (["check", "--config", "missing.yaml"], "missing.yaml: file not found", "[]"),
        (["query", "--config", "missing.yaml", "select 1"], "missing.yaml: file not found", "[]"),
        (["report", "--run", "r", "--config", "missing.yaml"], "missing.yaml: file not found", "[]"),
        (["check", "--config", "list.yaml"], "list.yaml: the top level must be a mapping of keys", "[]"),
        (["export", "focus", "--config", "missing.yaml", "--period", "2026-11", "--out", "x"], "file not found", "[]"),
        (
            ["export", "focus", "--period", "2026-11", "--out", "x", "--source", "nope"],
            "error: unknown billing source 'nope'; known billing sources (sources[].name): bills",
            CONFIG_MODULES,
        ),
        (["check", "--config", "unknown-key.yaml"], "unknown-key.yaml: colour: unknown key", CONFIG_MODULES),
        (["query", "--at", "²", "select 1"], "--at '²' is neither", "[]"),
        (["report", "--all", "--at", "", "--out", "x"], "--at '' is neither", "[]"),
    ],
)
def test_a_usage_or_config_error_is_said_before_anything_heavy_is_loaded(
    tmp_path: Path, command: list[str], message: str, imported: str
) -> None:
    (tmp_path / "bills").mkdir()
    (tmp_path / "runledger.yaml").write_text("sources:\n  - {name: bills, kind: focus, path: bills}\n")
    (tmp_path / "list.yaml").write_text("- sources\n")
    (tmp_path / "unknown-key.yaml").write_text("colour: blue\n")
    result = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, *command],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "RUNLEDGER_CONFIG": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert message in result.stderr
    assert result.stdout.splitlines()[-1] == f"exit 2 {imported}"


def test_check_names_the_file_and_key_of_a_bad_group_budget(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("budgets: budgets\n")
    (tmp_path / "budgets").mkdir()
    sweep = tmp_path / "budgets" / "sweep.yaml"
    sweep.write_text(
        "scope: {experiment: lr-sweep}\ncurrency: USD\nperiod: monthly\nwindow: {start: 2026-11-17, end: 2026-11-20}\n"
        "amount: {compute: 6000, gpus: 10}\nthresholds: {warning: 0.8, over: 1.0}\n"
    )
    both = tmp_path / "budgets" / "both.yaml"
    both.write_text("training_run: llm-7b\nscope: {owner: alice}\n")
    assert invoke("check", "--config", str(config)) == (
        2,
        (
            f"error: {both}: scope: cannot be given together with `training_run`: a budget file budgets one run "
            "(`training_run:`) or one group of runs and resources (`scope:`); split it into two files\n"
            f"{sweep}: amount.gpus: unknown cost category; use one of compute, storage, network, data, monitoring, "
            "support, tax, other, labor, data_labeling, tooling, on_prem, migration, opportunity\n"
            "check: 1 problem found, nothing was run\n"
        ),
    )

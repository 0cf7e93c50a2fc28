"""What a newcomer reads first: the README's first screen, the setup and tagging guides it links
to, the systemd units beside the cron lines, and the export folder it suggests kept out of git."""

import re
import shutil
import subprocess

import pytest

from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.sources.slurm.reader import comment_pairs
from tests.support import REPO

README = (REPO / "README.md").read_text()
OPERATIONS = (REPO / "docs" / "operations.md").read_text()
TAGGING = (REPO / "docs" / "tagging.md").read_text()
GUIDES = ("docs/first-setup.md", "docs/tagging.md")


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub spells it: lower case, punctuation dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in first_block.splitlines()] == ["make run", "make test"]


def test_the_folder_the_readme_suggests_for_exports_is_ignored_by_git() -> None:
    """Before, `runledger export focus --out exports` left an untracked folder in the clone."""
    (folder,) = set(re.findall(r"--out (\S+)", README))
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        ["git", "check-ignore", "--quiet", f"{folder}/focus/2026-11/part-0.parquet"], cwd=REPO, check=False
    )
    assert ignored.returncode == 0, f"{folder}/ is not in .gitignore"


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guides_are_linked_from_the_readme_and_every_link_of_theirs_resolves(guide: str) -> None:
    assert f"]({guide})" in README
    path = REPO / guide
    for target, anchor in re.findall(r"\]\(([\w./-]+\.md)?(?:#([\w-]+))?\)", path.read_text()):
        linked = path.parent / target if target else path
        assert linked.is_file(), f"{guide} links to {target}"
        if anchor:
            anchors = {_anchor(line.lstrip("#")) for line in linked.read_text().splitlines() if line.startswith("#")}
            assert anchor in anchors, f"{guide} links to {target}#{anchor}"


def test_the_systemd_units_run_what_the_cron_lines_run() -> None:
    cron_lines = re.findall(r"^0 [56] \* \* [*0]  (.*)$", OPERATIONS.split("```cron\n", 1)[1].split("```")[0], re.M)
    nightly_cron, upkeep_cron = (re.sub(r" >> .*$", "", line).replace("\\%", "%") for line in cron_lines)
    units = {
        block.split("\n", 1)[0].removeprefix("# /etc/systemd/system/"): block
        for block in re.findall(r"```ini\n(.*?)```", OPERATIONS, re.S)
    }
    assert set(units) == {"runledger.service", "runledger.timer", "runledger-upkeep.service", "runledger-upkeep.timer"}

    def setting(unit: str, key: str) -> str:
        (value,) = re.findall(rf"^{key}=(.*)$", units[unit], re.M)
        return value.replace("%%", "%").replace("$$", "$")

    # systemd hands `%%` and `$$` to the shell as `%` and `$`: the same command as cron's
    nightly = setting("runledger.service", "ExecStart").removeprefix("/bin/sh -c 'exec ").removesuffix("'")
    assert f"cd {setting('runledger.service', 'WorkingDirectory')} && {nightly}" == nightly_cron
    upkeep = setting("runledger-upkeep.service", "ExecStart")
    assert upkeep_cron.endswith(upkeep.removeprefix(setting("runledger-upkeep.service", "WorkingDirectory") + "/"))
    assert setting("runledger.timer", "OnCalendar") == "*-*-* 06:00:00 UTC"  # cron's 0 6 * * *
    assert setting("runledger-upkeep.timer", "OnCalendar") == "Sun *-*-* 05:00:00 UTC"  # cron's 0 5 * * 0


def test_the_tagging_guide_names_runs_by_keys_runledger_reads() -> None:
    for section in ("EC2 launch templates", "SkyPilot", "Kubernetes pod labels", "Slurm job comments"):
        assert f"\n## {section}" in TAGGING
    (comment,) = set(re.findall(r'--comment[ =]"([^"]+)"', TAGGING))
    pairs = comment_pairs(comment)
    assert pairs["training_run"] == "llm-7b-pt-r1"
    aliases = {alias for keys in DEFAULT_DIMENSIONS.values() for alias in keys}
    assert set(pairs) <= aliases
    assert set(re.findall(r'"Key": "(\w+)"', TAGGING)) <= aliases

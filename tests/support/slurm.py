"""A throwaway Slurm cluster on 127.0.0.1 for the tests of the `slurm` source: MariaDB, slurmdbd,
slurmctld and one slurmd whose node has 8 GPUs, all in one temporary folder on free ports.

Debian's slurmctld, slurmd, slurmdbd, slurm-client (22.05) and mariadb-server provide the programs
(`make test-slurm` installs them where it can). The daemons run in the foreground as this test's
children, as the current user (SlurmUser is that user), with `auth/none`: no munge. Slurm 22.05
drops a GPU without a device file from a node's GRES ("Removing file-less GPU"), even with
`Flags=CountOnly`, so gres.conf names 8 links to /dev/null. Job comments reach the accounting
database only with `AccountingStoreFlags=job_comment`.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

CLUSTER = "runledger"
NODE = "gpu-node1"
NODE_GPUS = 8
NODE_CPUS = 8
PROGRAMS = ("mariadb-install-db", "mariadbd", "slurmdbd", "slurmctld", "slurmd", "sacctmgr", "sbatch", "sacct")
START_TIMEOUT = 30.0


class SlurmStartError(RuntimeError):
    """A server of the cluster did not start; the message holds its own log."""


@dataclass(frozen=True)
class SlurmCluster:
    """A running cluster: its name, its one node, and the configuration its clients read."""

    name: str
    node: str
    root: Path

    @property
    def env(self) -> dict[str, str]:
        """The environment of a Slurm client of this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.root / "slurm.conf"), "SLURM_TIME_FORMAT": "standard"}

    def run(self, *command: str) -> str:
        """Runs a Slurm client (`sbatch`, `sacct`, `scontrol`, ...) on this cluster; its stdout."""
        done = subprocess.run(command, env=self.env, cwd=self.root, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def sbatch(self, *options: str) -> str:
        """Submits a batch job and returns its id."""
        return self.run("sbatch", "--parsable", "--output=/dev/null", *options).strip().split(";")[0]

    def job_states(self) -> dict[str, str]:
        """The state of each job the controller still knows, by job id."""
        lines = self.run("squeue", "--noheader", "--states=all", "--format=%i %T").splitlines()
        return dict(line.split() for line in lines if line.strip())

    def wait_for(self, job_id: str, state: str, timeout: float = 20.0) -> None:
        """Waits until the controller reports the job in `state`."""
        deadline = time.monotonic() + timeout
        while (current := self.job_states().get(job_id)) != state:
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is {current}, not {state}, after {timeout:.0f} s")
            time.sleep(0.2)

    def sacct_records(self, *flags: str) -> list[dict]:
        """The job records `sacct --json` returns with these flags."""
        return json.loads(self.run("sacct", "--json", *flags))["jobs"]


def installed() -> list[str]:
    """The cluster's programs missing from this machine."""
    return [program for program in PROGRAMS if shutil.which(program) is None]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"


def _wait_for_port(port: int, process: subprocess.Popen, name: str, root: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SlurmStartError(f"{name} exited with {process.returncode}:\n{_logs(root, name)}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SlurmStartError(
        f"{name} did not listen on 127.0.0.1:{port} within {START_TIMEOUT:.0f} s:\n{_logs(root, name)}"
    )


def _logs(root: Path, name: str) -> str:
    """The end of a server's log and of its output."""
    return "\n".join(_tail(root / f"{name}.{suffix}") for suffix in ("log", "out"))


@contextmanager
def _daemon(command: list[str], root: Path, port: int, env: dict[str, str]) -> Iterator[None]:
    """Runs a server in the foreground until the block ends; its output in `<name>.out`, beside
    the `<name>.log` of the Slurm daemons."""
    name = command[0]
    with (root / f"{name}.out").open("ab") as output:
        process = subprocess.Popen(command, env=env, cwd=root, stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process, name, root)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _write_configuration(root: Path, ports: dict[str, int], user: str, gpu_type: str | None) -> None:
    typed = f"{gpu_type}:" if gpu_type else ""
    devices = root / "dev"
    devices.mkdir()
    for index in range(NODE_GPUS):
        (devices / f"gpu{index}").symlink_to("/dev/null")
    gres_type = f" Type={gpu_type}" if gpu_type else ""
    (root / "gres.conf").write_text(f"Name=gpu{gres_type} File={devices}/gpu[0-{NODE_GPUS - 1}]\n")
    for folder in ("state", "spool"):
        (root / folder).mkdir()
    dbd = root / "slurmdbd.conf"
    dbd.write_text(
        "\n".join(
            [
                "AuthType=auth/none",
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                f"DbdPort={ports['slurmdbd']}",
                f"SlurmUser={user}",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={ports['mariadb']}",
                "StorageUser=root",
                "StorageLoc=slurm_acct_db",
                f"PidFile={root}/slurmdbd.pid",
                f"LogFile={root}/slurmdbd.log",
                "",
            ]
        )
    )
    dbd.chmod(0o600)
    (root / "slurm.conf").write_text(
        "\n".join(
            [
                f"ClusterName={CLUSTER}",
                "SlurmctldHost=localhost(127.0.0.1)",
                f"SlurmctldPort={ports['slurmctld']}",
                f"SlurmdPort={ports['slurmd']}",
                "AuthType=auth/none",
                "CredType=cred/none",
                f"SlurmUser={user}",
                f"SlurmdUser={user}",
                f"StateSaveLocation={root}/state",
                f"SlurmdSpoolDir={root}/spool",
                f"SlurmctldPidFile={root}/slurmctld.pid",
                f"SlurmdPidFile={root}/slurmd.pid",
                f"SlurmctldLogFile={root}/slurmctld.log",
                f"SlurmdLogFile={root}/slurmd.log",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "MpiDefault=none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                # the node declares more CPUs than a test machine has
                "SlurmdParameters=config_overrides",
                "GresTypes=gpu",
                "AccountingStorageType=accounting_storage/slurmdbd",
                "AccountingStorageHost=127.0.0.1",
                f"AccountingStoragePort={ports['slurmdbd']}",
                f"AccountingStorageTRES=gres/gpu,gres/gpu:{gpu_type}" if gpu_type else "AccountingStorageTRES=gres/gpu",
                "AccountingStoreFlags=job_comment",
                "TrackWCKey=yes",
                "JobCompType=jobcomp/none",
                "ReturnToService=2",
                "KillWait=1",
                f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} Gres=gpu:{typed}{NODE_GPUS} RealMemory=1000",
                f"PartitionName=gpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )


def _mariadb(root: Path, port: int, user: str) -> list[str]:
    data = root / "mariadb"
    install = [
        "mariadb-install-db",
        "--no-defaults",
        f"--user={user}",
        f"--datadir={data}",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
    ]
    done = subprocess.run(install, capture_output=True, text=True)
    if done.returncode != 0:
        raise SlurmStartError(f"mariadb-install-db failed ({done.returncode}): {done.stderr[-2000:]}")
    return [
        "mariadbd",
        "--no-defaults",
        f"--user={user}",
        f"--datadir={data}",
        f"--socket={root}/mariadbd.sock",
        f"--port={port}",
        "--bind-address=127.0.0.1",
        f"--pid-file={root}/mariadbd.pid",
        "--skip-log-bin",
        "--innodb-buffer-pool-size=32M",
        "--innodb-flush-log-at-trx-commit=0",
    ]


def _wait_for_node(cluster: SlurmCluster, root: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    state = ""
    while time.monotonic() < deadline:
        state = cluster.run("sinfo", "--noheader", "--nodes", NODE, "--format=%T").strip()
        if state in ("idle", "mixed", "allocated"):
            return
        time.sleep(0.2)
    raise SlurmStartError(f"node {NODE} is {state!r}, not idle, after {START_TIMEOUT:.0f} s:\n{_logs(root, 'slurmd')}")


@contextmanager
def local_slurm(gpu_type: str | None = None) -> Iterator[SlurmCluster]:
    """A throwaway cluster (auth/none, 127.0.0.1, free ports) with one 8-GPU node, its accounting
    in its own MariaDB; every job cancelled and every server stopped and removed afterwards.

    Args:
        gpu_type: the GPUs' type (`h100`): the node declares `gpu:h100:8`, and the accounting keeps
            the `gres/gpu:h100` TRES beside `gres/gpu`. None: untyped GPUs.
    """
    missing = installed()
    if missing:
        raise SlurmStartError(
            f"missing {', '.join(missing)}: `make test-slurm` installs Debian's slurmctld slurmd slurmdbd "
            "slurm-client mariadb-server (as root)"
        )
    # outside pytest's own temporary folder, whose path a daemon's socket name may not fit
    root = Path(tempfile.mkdtemp(prefix="runledger-slurm-"))
    user = getpass.getuser()
    ports = {name: _free_port() for name in ("mariadb", "slurmdbd", "slurmctld", "slurmd")}
    cluster = SlurmCluster(name=CLUSTER, node=NODE, root=root)
    try:
        _write_configuration(root, ports, user, gpu_type)
        env = cluster.env
        with ExitStack() as servers:
            servers.enter_context(_daemon(_mariadb(root, ports["mariadb"], user), root, ports["mariadb"], env))
            servers.enter_context(_daemon(["slurmdbd", "-D"], root, ports["slurmdbd"], env))
            cluster.run("sacctmgr", "--immediate", "add", "cluster", CLUSTER)
            servers.enter_context(_daemon(["slurmctld", "-D", "-i"], root, ports["slurmctld"], env))
            servers.enter_context(_daemon(["slurmd", "-D", "-N", NODE], root, ports["slurmd"], env))
            _wait_for_node(cluster, root)
            try:
                yield cluster
            finally:
                _cancel_every_job(cluster)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cancel_every_job(cluster: SlurmCluster) -> None:
    """Cancels the jobs still queued or running, so that no job's process outlives its slurmd."""
    subprocess.run(["scancel", "--full", f"--user={getpass.getuser()}"], env=cluster.env, capture_output=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = cluster.job_states().values()
        if all(state not in ("RUNNING", "PENDING", "COMPLETING", "CONFIGURING") for state in states):
            return
        time.sleep(0.2)


SACCT_WINDOW = ("-a", "-D", "-S", "now-2days", "-E", "now")
"""The flags of the documented cron dump: every user's jobs, requeued runs too, the last two days."""


@dataclass(frozen=True)
class RecordedJobs:
    """The jobs `record_jobs` submitted, by role, and the two `sacct --json` dumps it took."""

    finished: str
    short: str
    requeued: str
    held: str
    first_dump: Path
    second_dump: Path


def record_jobs(cluster: SlurmCluster, folder: Path) -> RecordedJobs:
    """Runs the jobs the `slurm` source's tests read and dumps `sacct --json` twice.

    `finished` (2 GPUs, 1 CPU, account `llm-7b`) has ended before the first dump; `short` (4 GPUs,
    2 CPUs, wckey `exp-base`) runs in the first dump and has ended by the second; `requeued`
    (1 GPU) runs in the first dump, is requeued and runs again in the second (two records);
    `held` (begins in an hour) never starts.
    """
    cluster.run("sacctmgr", "--immediate", "add", "account", "llm-7b", f"cluster={cluster.name}")
    cluster.run("sacctmgr", "--immediate", "add", "user", getpass.getuser(), "account=llm-7b")
    finished = cluster.sbatch(
        "--gres=gpu:2", "--cpus-per-task=1", "--account=llm-7b", "--job-name=llm-7b/lr-sweep",
        "--comment=training_run=llm-7b experiment=lr-sweep", "--wrap=sleep 1",
    )  # fmt: skip
    short = cluster.sbatch(
        "--gres=gpu:4", "--cpus-per-task=2", "--wckey=exp-base", "--job-name=llm-13b/base",
        "--comment=training_run=llm-13b,experiment=base", "--wrap=sleep 5",
    )  # fmt: skip
    requeued = cluster.sbatch("--requeue", "--gres=gpu:1", "--comment=training_run=llm-7b", "--wrap=sleep 300")
    held = cluster.sbatch("--gres=gpu:1", "--begin=now+1hour", "--comment=training_run=never", "--wrap=sleep 1")
    cluster.wait_for(finished, "COMPLETED")
    cluster.wait_for(requeued, "RUNNING")
    _wait_for_records(cluster, {finished: ["COMPLETED"], short: ["RUNNING"], requeued: ["RUNNING"]})
    first_dump = folder / "sacct-1.json"
    first_dump.write_text(cluster.run("sacct", "--json", *SACCT_WINDOW))
    cluster.run("scontrol", "requeue", requeued)
    cluster.wait_for(requeued, "PENDING")
    # a requeued job waits for its credential to expire (120 s) before it may start again
    cluster.run("scontrol", "update", f"jobid={requeued}", "StartTime=now")
    cluster.wait_for(requeued, "RUNNING")
    cluster.wait_for(short, "COMPLETED")
    _wait_for_records(cluster, {short: ["COMPLETED"], requeued: ["REQUEUED", "RUNNING"]})
    second_dump = folder / "sacct-2.json"
    second_dump.write_text(cluster.run("sacct", "--json", *SACCT_WINDOW))
    return RecordedJobs(finished, short, requeued, held, first_dump, second_dump)


def _wait_for_records(cluster: SlurmCluster, expected: dict[str, list[str]], timeout: float = 20.0) -> None:
    """Waits until the accounting database holds these jobs' records in these states (slurmctld
    sends them to slurmdbd as they happen, not at once)."""
    deadline = time.monotonic() + timeout
    while True:
        found: dict[str, list[str]] = {}
        for record in cluster.sacct_records(*SACCT_WINDOW):
            found.setdefault(str(record["job_id"]), []).append(record["state"]["current"])
        if all(sorted(found.get(job, [])) == states for job, states in expected.items()):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"sacct shows {found}, expected {expected}, after {timeout:.0f} s")
        time.sleep(0.3)

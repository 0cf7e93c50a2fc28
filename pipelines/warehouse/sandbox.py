"""The kernel's guard around a reader of the lake: Landlock (Linux 5.13 and newer).

A DuckLake reader must load the catalog's extension (sqlite or postgres), and those extensions
open files and connections on their own, past DuckDB's `enable_external_access`: with SQL alone a
reader could `ATTACH` the catalog again, writable. So the process that runs user SQL first asks
the kernel to refuse it every file write outside one private folder (DuckDB's spill space) and
every TCP connection but those the lake needs; whatever the SQL then makes DuckDB or an extension
do, it cannot change a byte on disk or reach another host's port. Reads stay allowed: the user
could read those files anyway.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every Linux architecture
_CREATE_RULESET_VERSION = 1
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
# Rights that change the file system, by the Landlock ABI version that introduced them.
_WRITE_RIGHTS = {
    1: sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12)),  # write, remove, make files and dirs
    2: 1 << 13,  # refer (link or rename across directories)
    3: 1 << 14,  # truncate
    5: 1 << 15,  # ioctl on devices
}
_NET_CONNECT_TCP, _NET_BIND_TCP = 1 << 1, 1 << 0
_NET_ABI = 4
_SCOPE_ALL, _SCOPE_ABI = (1 << 0) | (1 << 1), 6  # abstract unix sockets and signals


class SandboxUnavailable(RuntimeError):
    """The kernel offers no Landlock: reads of user SQL cannot be confined here."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPortAttr(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or it is disabled)."""
    version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _checked(result: int, call: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{call}: {os.strerror(errno)}")
    return result


def confine(writable: Path, tcp_ports: Sequence[int] = ()) -> int:
    """Confines this process and its future threads and children for good.

    Call it before any other thread starts (DuckDB's included): threads that already run are
    not confined.

    Args:
        writable: the one folder where files may be created, written and removed.
        tcp_ports: ports the process may still connect to (a PostgreSQL catalog, an object
            store); none for a lake on local disk.

    Returns:
        The Landlock ABI version the rules were written for.

    Raises:
        SandboxUnavailable: the kernel has no Landlock, or too old a one to refuse TCP while
            `tcp_ports` are asked for.
    """
    version = landlock_abi()
    if version < 1:
        raise SandboxUnavailable("this kernel has no Landlock (Linux 5.13 or newer, enabled in its LSM list)")
    if tcp_ports and version < _NET_ABI:
        raise SandboxUnavailable(f"Landlock ABI {version} cannot limit TCP connections (needs 4, Linux 6.7)")
    write_rights = sum(rights for since, rights in _WRITE_RIGHTS.items() if version >= since)
    net_rights = (_NET_CONNECT_TCP | _NET_BIND_TCP) if version >= _NET_ABI else 0
    scoped = _SCOPE_ALL if version >= _SCOPE_ABI else 0
    attr = _RulesetAttr(write_rights, net_rights, scoped)
    size = 24 if version >= _SCOPE_ABI else 16 if version >= _NET_ABI else 8
    libc = _libc()
    ruleset = _checked(
        libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    try:
        folder = os.open(writable, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
        try:
            rule = _PathBeneathAttr(write_rights, folder)
            _checked(
                libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0), "landlock_add_rule"
            )
        finally:
            os.close(folder)
        for port in tcp_ports:
            port_rule = _NetPortAttr(_NET_CONNECT_TCP, port)
            _checked(
                libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_NET_PORT, ctypes.byref(port_rule), 0), "landlock_add_rule"
            )
        _checked(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _checked(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version

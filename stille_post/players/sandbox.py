"""The walls around an isolated agent's process (players/isolation.py): resource limits
and, where the kernel has it, a Landlock file-system (and network) sandbox.

Landlock (Linux 5.13+) lets an unprivileged process give up access to every file except
the ones it names, for itself and its children, for good; it also confines what a
sandboxed process may do to processes outside its sandbox (no ptrace, no reading their
`/proc/PID/environ` or memory). Used here through its three system calls (ctypes): the
agent may read the Python installation, stille_post and its own code, write only its
private temporary folder, and (ABI 4+) make no TCP connection. Without Landlock the
limits and the clean environment still apply, but the agent can read what its user can
read; `available()` says which, and the CLI warns.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from collections.abc import Iterable
from dataclasses import dataclass

# System call numbers: one table for every architecture since Linux 5.13.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE = 1 << 14  # ABI 3
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | (1 << 15)  # + IOCTL_DEV (ABI 5)
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM (ABI 1)
    if abi >= 2:
        rights |= 1 << 13  # REFER
    if abi >= 3:
        rights |= 1 << 14  # TRUNCATE
    if abi >= 5:
        rights |= 1 << 15  # IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or is not Linux)."""
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def available() -> bool:
    return abi_version() >= 1


@dataclass(frozen=True)
class Limits:
    """What one isolated agent's process may use."""

    memory_bytes: int = 2 * 1024**3  # address space: an interpreter and a modest library
    cpu_seconds: int = 600  # over the whole game; past it the kernel ends the process
    file_bytes: int = 16 * 1024**2  # the largest file it may write (in its own folder)
    open_files: int = 64


def apply_limits(limits: Limits) -> None:
    for what, value in ((resource.RLIMIT_AS, limits.memory_bytes),
                        (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_FSIZE, limits.file_bytes),
                        (resource.RLIMIT_NOFILE, limits.open_files),
                        (resource.RLIMIT_CORE, 0)):
        _, hard = resource.getrlimit(what)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(what, (value, value))


def confine(read: Iterable[str], write: Iterable[str]) -> int:
    """Give up every file but `read` (read and execute, folders with what is beneath
    them; missing paths are skipped) and `write` (anything), every TCP connection and
    bind (ABI 4+), and signals and abstract sockets across the wall (ABI 6+).
    Irreversible. Returns the ABI used; raises OSError when the kernel refuses."""
    abi = abi_version()
    libc = _libc()
    if abi < 1 or libc is None:
        raise OSError("this kernel has no Landlock")
    fs = _fs_rights(abi)
    attr = _RulesetAttr(fs, (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0,
                        (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        reading = _EXECUTE | _READ_FILE | _READ_DIR
        for paths, rights in ((read, reading), (write, fs)):
            for path in paths:
                _allow(libc, ruleset, path, rights & fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not on this machine: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        rule = _PathBeneathAttr(rights, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule),
                        ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


__all__ = ["Limits", "abi_version", "apply_limits", "available", "confine"]

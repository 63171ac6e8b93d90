"""The kernel's walls between one job and everything else in its worker: namespaces and capabilities, through
libc (Python 3.11 has no unshare, setns or capset). Free of torch.

A job gets a PID namespace of its own (it cannot name, so cannot signal, trace or `prlimit`, any process
of its worker; when its first process ends, the kernel ends all the others), an IPC namespace of its own
(SysV shared memory, semaphores and queues end with it) and a user namespace of its own (its keyrings and
its count of processes are its own). The worker makes them without privilege: its relay, first thing,
enters a user namespace of its own, in which the template holds the capabilities to make a PID and an IPC
namespace per job. The job drops every capability before any answer code runs.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    """Moves this process into new namespaces (for CLONE_NEWPID: its next child, which becomes their PID 1).
    Where `flags` has CLONE_NEWUSER, this process's user and group become themselves in the new one."""
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(flags), "unshare")
    if flags & CLONE_NEWUSER:
        _map_ids(uid, gid)


def setns(fd: int, kind: int) -> None:
    _check(_libc.setns(fd, kind), "setns")


def _map_ids(uid: int, gid: int) -> None:
    """Maps the new user namespace's `uid` and `gid` to the same ids outside, the only map an unprivileged
    process may write. /proc/self is root's while the process is not dumpable, so it is for these writes."""
    prctl(PR_SET_DUMPABLE, 1)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    finally:
        prctl(PR_SET_DUMPABLE, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_privileges() -> None:
    """No capability in any namespace, none to gain back (no_new_privs: no setuid program raises them), and
    nobody of the same user may trace this process or read its memory (not dumpable)."""
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # the bounding set, up to the kernel's last one
        cap += 1
    if ctypes.get_errno() not in (22, 1):  # EINVAL past the last capability; EPERM where none was held
        _check(-1, "dropping the bounding set")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL on kernels before ambient caps
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)


def capabilities() -> int:
    """The effective capabilities of this process, as a bit mask (for the tests and the worker's checks)."""
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def wait_status(pid: int) -> ctypes.c_int:
    """Waits for the child `pid` to end; its status (as waitpid(2) gives it) in a ctypes buffer, never a
    Python int: the template overwrites the buffer once it has passed it on, and keeps nothing of a job."""
    status = ctypes.c_int(0)
    while _libc.waitpid(pid, ctypes.byref(status), 0) < 0:
        if ctypes.get_errno() != 4:  # EINTR: try again
            _check(-1, "waitpid")
    return status


def forget(buffer: ctypes.c_int) -> None:
    ctypes.memset(ctypes.addressof(buffer), 0, ctypes.sizeof(buffer))

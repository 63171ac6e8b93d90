"""The limits every submission runs under, and their defaults (PrairieLearn gives a job about 2 GiB). The
wall-clock limit is each job's own (Job.timeout, from the batch's settings), and CPU time follows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    memory: int = 2 * 1024**3  # bytes the job may allocate beyond the warm worker it forks from: each of its
    # processes (RLIMIT_AS), and, where the slot has a cgroup (as root), all of them together
    processes: int = 128  # tasks a slot may have (its pids cgroup), stopping fork storms; without a cgroup, a job
    # cannot fork at all (job.JOB_TASKS), or, without namespaces per job, this is its user's RLIMIT_NPROC
    file_size: int = 64 * 1024**2  # largest file a job may write, its printed output included
    output: int = 64 * 1024  # bytes of printed output kept for the results (the rest is cut)
    scratch: int = 256 * 1024**2  # size of the sandbox's private /tmp, the only place a job may write
    report: int = 64 * 1024**2  # largest report (observations included) a job may send back

"""The limits every submission runs under, and their defaults (PrairieLearn gives a job about 2 GiB). The
wall-clock limit is each job's own (Job.timeout, from the batch's settings), and CPU time follows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    memory: int = 2 * 1024**3  # bytes the job may allocate beyond the warm worker it forks from
    processes: int = 128  # processes and threads of the sandbox's user (RLIMIT_NPROC): stops fork storms
    file_size: int = 64 * 1024**2  # largest file a job may write, its printed output included
    output: int = 64 * 1024  # bytes of printed output kept for the results (the rest is cut)
    scratch: int = 256 * 1024**2  # size of the sandbox's private /tmp, the only place a job may write
    report: int = 64 * 1024**2  # largest report (observations included) a job may send back

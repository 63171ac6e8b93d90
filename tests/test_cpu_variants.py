"""The shipped public data and the self-check hold on any CPU: the public-data tests (drift, read-back, check()
on every solution without references) run again in fresh processes under each instruction set torch can
be told to use (ATEN_CPU_CAPABILITY) and with 1 and 2 threads. float32 rounds differently under each; a
comparison at a tolerance its dtype does not deserve fails here, not on a learner's machine."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

VARIANTS = [(capability, threads) for capability in ("", "default", "avx2") for threads in (1, 2)]
"""'' is the machine's own best (AVX-512 here); default is no vector instructions."""


@pytest.mark.slow
@pytest.mark.parametrize(("capability", "threads"), VARIANTS,
                         ids=[f"{c or 'own'}-{t}threads" for c, t in VARIANTS])
def test_public_data_and_self_check_hold_on_this_cpu_variant(capability, threads):
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "PYTEST_XDIST_WORKER")}
    env["OMP_NUM_THREADS"] = str(threads)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_public_data.py", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-W", "ignore::UserWarning"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout.splitlines()[-1]

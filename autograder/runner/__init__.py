"""Where answer code runs. One small interface, `Runner.run(job) -> RunReport`, so the sandbox and
the warm pool can change without the rest of the grader noticing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the pool is imported before torch (cli.py); these import torch
    from ..core.outcome import RunReport, Trial
    from ..core.spec import Inputs


@dataclass(frozen=True)
class Job:
    """One submission's answer code and the trials to run it on."""

    exercise: str
    code: str
    trials: tuple[Trial, ...]
    inputs: dict[str, Inputs]
    timeout: float = 60.0
    hidden: frozenset[str] = frozenset()
    """Keys of `inputs` ("scenario/dtype") that the job's process gets only after every other trial has run, so
    that nothing it printed or raised before then can hold a hidden input (the pool keeps to this; in process,
    the order of `trials` is all there is)."""

    def phases(self) -> tuple[tuple[Trial, ...], tuple[Trial, ...]]:
        """The trials on public inputs, then those on hidden ones."""
        hidden = tuple(t for t in self.trials if t.input_key in self.hidden)
        return tuple(t for t in self.trials if t not in hidden), hidden


class Runner(Protocol):
    def run(self, job: Job) -> RunReport: ...


class InProcessRunner:
    """Runs trusted code in this process: the solutions in tests, and a student's own self-check.

    Never for grading submissions: grading keeps student code out of the process that holds the
    reference.
    """

    def run(self, job: Job) -> RunReport:
        from ..exercises import get
        from ..harness import run_answer

        public, hidden = job.phases()
        return run_answer(get(job.exercise), job.code, public + hidden, job.inputs)

"""Which devices a grading runs on: the CPU always, CUDA when asked for and present."""

from __future__ import annotations

CHOICES = ("auto", "cpu", "cuda", "all")


class DeviceError(Exception):
    """A device was asked for that this machine does not have."""


def resolve(choice: str, cuda_available: bool) -> tuple[tuple[str, ...], str | None]:
    """The devices for `--device choice`, and a warning to print once, if any.

    auto: CPU, plus CUDA where present. all: the same, but say so when CUDA is missing.
    cuda: CUDA alone (its results are still compared with the CPU reference).
    """
    if choice not in CHOICES:
        raise DeviceError(f"unknown device {choice!r}; choose one of {', '.join(CHOICES)}")
    if choice == "cpu":
        return ("cpu",), None
    if choice == "cuda":
        if not cuda_available:
            raise DeviceError("--device cuda: no CUDA device is available here (torch.cuda.is_available() is False)")
        return ("cuda",), None
    if cuda_available:
        return ("cpu", "cuda"), None
    return ("cpu",), ("--device all: no CUDA device here, grading on the CPU only" if choice == "all" else None)

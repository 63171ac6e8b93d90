"""How a batch grades: devices (the CPU always, CUDA when asked for and present), the one exercise it grades (if
one), the timeout, the term's salt. Plain data without torch, so that a platform's grader reads its
configuration before it imports torch."""

from __future__ import annotations

from dataclasses import dataclass

from .feedback.wording import say

TORCH_RELEASES = ("2.13.0", "2.14.1")
"""The torch releases the course is checked on (README, "Which torch": the whole suite on the first, what differs
most likely on the second, and the whole of it by scripts/check-release). Others of the 2.x line may word a
message otherwise or behave otherwise where a release changed; the notebooks' setup cell says so when a
learner's is none of these, and the course states each such change with its release."""
TORCH_CHECKED = TORCH_RELEASES[0]
"""The release the bundles pin (and Binder's): the one every test runs on."""

DEFAULT_SALT = "inplace-course"
"""Mixed into every hidden seed where no salt is given; a batch sets a secret one per term."""


@dataclass(frozen=True)
class Settings:
    devices: tuple[str, ...] = ("cpu",)
    exercise: str | None = None  # every file's; a notebook whose metadata names another is malformed
    timeout: float = 60.0
    salt: str = DEFAULT_SALT  # mixed into every hidden seed; set a secret one per term
    fixes: bool = True  # whether feedback may propose a literal fix; False for a graded class (--no-fixes)


CHOICES = ("auto", "cpu", "cuda", "all")


class DeviceError(Exception):
    """A device was asked for that this machine does not have."""


def resolve(choice: str, cuda_available: bool) -> tuple[tuple[str, ...], str | None]:
    """The devices for `--device choice`, and a warning to print once, if any.

    auto: CPU, plus CUDA where present. all: the same, but say so when CUDA is missing.
    cuda: CUDA alone (its results are still compared with the CPU reference).
    """
    if choice not in CHOICES:
        raise DeviceError(say("cli: unknown device", choice=repr(choice), choices=", ".join(CHOICES)))
    if choice == "cpu":
        return ("cpu",), None
    if choice == "cuda":
        if not cuda_available:
            raise DeviceError(say("cli: no cuda"))
        return ("cuda",), None
    if cuda_available:
        return ("cpu", "cuda"), None
    return ("cpu",), (say("cli: no cuda for all") if choice == "all" else None)

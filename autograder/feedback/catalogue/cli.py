"""The words of the command line's messages to whoever runs it."""

TEMPLATES: dict[str, str] = {
    "cli: stopped": "The self-check {stopped}; --timeout sets the limit.",
    # --check of assign and publish
    "cli: assign drift": "Run `autograder assign` to regenerate exercises/ from solutions/.",
    "cli: assign matches": "{out}/ matches {solutions}/",
    "cli: publish drift": "Run `autograder publish` to remake the public data from references/.",
    "cli: publish matches": "{folder} matches references/ ({exercises} exercises)",
    # --device (settings.resolve)
    "cli: unknown device": "unknown device {choice}; choose one of {choices}",
    "cli: no cuda": "--device cuda: no CUDA device is available here (torch.cuda.is_available() is False)",
    "cli: no cuda for all": "--device all: no CUDA device here, grading on the CPU only",
}

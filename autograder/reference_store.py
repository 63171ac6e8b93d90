"""Where the reference implementations come from: `references/<id>.py`, outside the installed package.

Students install this package, and a worker may import it, so the answers must not be in it. The
grader loads each reference by file path from the course's `references/` folder: the one named by
AUTOGRADER_REFERENCES, or the one beside the package in a source checkout (an editable install).

The same file is the teacher's side of the exercise: besides REFERENCE (the intended math) it holds the
exercise's catalogue of known submissions (BROKEN, CORRECT, WRONG, SAYS), which `known_submissions`
reads for the tests and the sample class.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from .feedback.wording import say

if TYPE_CHECKING:
    from .core.outcome import Outcome, Trial
    from .core.spec import Exercise, Inputs

ENV = "AUTOGRADER_REFERENCES"
"""Names the references folder where it is not beside the package (a platform bundle sets it)."""

_CHECKOUT_REFERENCES = Path(__file__).resolve().parent.parent / "references"

_modules: dict[Path, ModuleType] = {}
_loaded: dict[Path, Mapping[str, Any]] = {}
_catalogues: dict[Path, KnownSubmissions] = {}
_lock = threading.Lock()


class ReferencesMissing(Exception):
    """The reference implementations are not installed here; the message says how to get them."""


def references_dir() -> Path | None:
    """The references folder: $AUTOGRADER_REFERENCES if set, else the checkout's if there is one."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    return _CHECKOUT_REFERENCES if _CHECKOUT_REFERENCES.is_dir() else None


def load_reference(exercise_id: str) -> Mapping[str, Any]:
    """The namespace the exercise's reference defines (its REFERENCE dict), loaded once per file."""
    path, module = _module(exercise_id)
    with _lock:
        if path not in _loaded:
            reference = getattr(module, "REFERENCE", None)
            if not isinstance(reference, Mapping) or not all(isinstance(k, str) for k in reference):
                raise TypeError(f"{path} must define REFERENCE, a dict from the names the exercise defines to objects")
            _loaded[path] = MappingProxyType(dict(reference))
        return _loaded[path]


@dataclass(frozen=True)
class KnownSubmissions:
    """An exercise's catalogue of known submissions, as its references/<id>.py writes them (the teacher's
    side: the tests grade every entry, the sample class is made from them; students never get them)."""

    broken: str
    """BROKEN: the report's code, the bug kept; it scores less than full marks."""
    correct: Mapping[str, str]
    """CORRECT: name -> code that scores full marks (an honest alternative to the solution)."""
    wrong: Mapping[str, tuple[str, frozenset[str]]]
    """WRONG: name -> (code, the checks that must fail for it): a plausible fix that is not one."""
    says: Mapping[str, tuple[str, ...]]
    """SAYS (optional): name of a WRONG entry -> words the feedback of its failing checks must contain."""


def known_submissions(exercise_id: str) -> KnownSubmissions:
    """The catalogue of known submissions in references/<id>.py (BROKEN, CORRECT, WRONG and SAYS), checked."""
    path, module = _module(exercise_id)
    with _lock:
        if path not in _catalogues:
            _catalogues[path] = _catalogue(path, vars(module))
        return _catalogues[path]


def _catalogue(path: Path, names: Mapping[str, Any]) -> KnownSubmissions:
    def bad(what: str) -> TypeError:
        return TypeError(f"{path}: {what} (see references/README.md)")

    def strings(value: object) -> tuple[str, ...] | None:
        """A name or a collection of names, as a tuple; None for anything else."""
        if isinstance(value, str):
            return (value,)
        items = tuple(value) if isinstance(value, (tuple, list, set, frozenset)) else ()
        return items if items and all(isinstance(i, str) for i in items) else None

    broken, correct, wrong, says = (names.get(n) for n in ("BROKEN", "CORRECT", "WRONG", "SAYS"))
    if not isinstance(broken, str) or not broken.strip():
        raise bad("BROKEN must be the code of the report, a non-empty string")
    if not isinstance(correct, Mapping) or not correct or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in correct.items()):
        raise bad("CORRECT must be a non-empty dict from a name to code that scores full marks")
    if not isinstance(wrong, Mapping) or not wrong:
        raise bad("WRONG must be a non-empty dict from a name to (code, the check or checks that must fail)")
    fails: dict[str, tuple[str, frozenset[str]]] = {}
    for name, entry in wrong.items():
        checks = strings(entry[1]) if isinstance(entry, tuple) and len(entry) == 2 else None
        if checks is None or not isinstance(name, str) or not isinstance(entry[0], str):
            raise bad(f"WRONG[{name!r}] must be (code, a check name or a set of check names)")
        fails[name] = (entry[0], frozenset(checks))
    said: dict[str, tuple[str, ...]] = {}
    for name, words in (says or {}).items():
        listed = strings(words)
        if name not in fails or listed is None:
            raise bad(f"SAYS[{name!r}] must name an entry of WRONG and give the words its feedback must contain")
        said[name] = listed
    return KnownSubmissions(broken, MappingProxyType(dict(correct)), MappingProxyType(fails), MappingProxyType(said))


def _module(exercise_id: str) -> tuple[Path, ModuleType]:
    """The executed references/<id>.py, once per file."""
    folder = references_dir()
    path = folder / f"{exercise_id}.py" if folder is not None else None
    if path is None or not path.is_file():
        raise ReferencesMissing(
            say("run: references missing", path=path, variable=ENV) if path is not None else
            say("run: references not found", variable=ENV, checkout=_CHECKOUT_REFERENCES))
    path = path.resolve()
    with _lock:
        if path not in _modules:
            _modules[path] = _execute(path)
        return path, _modules[path]


def _execute(path: Path) -> ModuleType:
    """Runs the file as a module under a private name (in sys.modules, as dataclasses and inspect expect:
    only the grader's process ever loads one)."""
    name = f"_autograder_reference_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferencesMissing(f"{path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def run_reference(exercise: Exercise, trials: tuple[Trial, ...], inputs: Mapping[str, Inputs],
                  reference: Mapping[str, Any] | None = None) -> dict[str, Outcome]:
    """The reference's observations on the CPU, for every scenario and dtype among `trials`: references/<id>.py
    (ReferencesMissing where it is not installed) unless `reference` is given. Here, on the grader's side:
    a worker, which imports the harness too, never loads a reference."""
    from .core.outcome import Trial
    from .harness import run_trials  # torch: a platform's grader reads this module before it imports torch

    namespace = load_reference(exercise.id) if reference is None else reference
    cpu = tuple(dict.fromkeys(Trial(t.scenario, t.dtype, "cpu") for t in trials))
    return run_trials(exercise, namespace, cpu, inputs, filename="<reference>", culprit_frames="<reference>")

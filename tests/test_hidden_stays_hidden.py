"""Hidden means hidden, public means public: nothing of a hidden trial reaches what a student reads.

What a student sees of a submission's results.json is every field but these, the teacher's alone:
- `teacher_stdout`: all the submission printed, hidden trials included;
- `grader_traceback`: the grader's own failure, for whoever fixes the grader;
- `submission_path`: where the file lies on the teacher's disk;
(the fields autograder.core.result marks TEACHER_ONLY), and but `execution_time`, a timing (it differs from run to run
anyway). Gradescope, PrairieLearn and the
HTML report show students parts of the rest only (`output`, each check's `output`, scores, statuses).

The attack: submissions that put everything they receive (the values, shapes and repr of every argument,
of a module's state, and of all they received before) into the message of an exception raised in every
scenario, and into print(). One kind raises on every call; the other is the exercise's solution that does so
only where an argument has a shape no public input has (so its visible checks pass on public inputs and
fail on hidden ones). Others leak by what they do rather than what they say: by the line they raise at (among
64, or among the lines their public trials raised at), by the class they raise, by the name of the autograd
Function that saved the tensor they write into (`x` and the hidden values). Graded with the real grade_batch
under two salts (two sets of hidden inputs), every student-visible field must be byte for byte the same, and
hold none of the hidden inputs' values or shapes, while the raw reports show those values did reach the grader;
and so must everything each platform (autograder/platforms/, all of them) makes of those results, and the
report's pages and gradebooks for students. Every exercise; in process for speed, and once in the sandboxed
warm pool, the path where printed output is captured.

The principle it holds the grader to (feedback/redact.py): nothing derived from a hidden trial's run reaches
text unless it is salt-independent by construction. The comparisons iterate over every field and every file,
so a field or a platform added later is covered without a change here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from autograder.batch import Preparations, Settings, grade_batch
from autograder.core.result import teacher_only_keys
from autograder.exercises import EXERCISES
from autograder.public import load_public
from autograder.runner import InProcessRunner
from tests.conftest import solution_code

SALTS = ("term-one-secret", "term-two-secret")
NOT_SHOWN = set(teacher_only_keys()) | {"execution_time"}

LEAK = '''
import torch as _torch

_SEEN = []
_PUBLIC_SHAPES = {public_shapes!r}


def _tensors(obj, depth=0):
    if isinstance(obj, _torch.Tensor):
        yield obj
    elif isinstance(obj, _torch.nn.Module):
        yield from obj.state_dict().values()
    elif isinstance(obj, (list, tuple)) and depth < 3:
        for item in obj:
            yield from _tensors(item, depth + 1)
    elif isinstance(obj, dict) and depth < 3:
        for item in obj.values():
            yield from _tensors(item, depth + 1)


def _repr(obj):
    try:
        return repr(obj)
    except Exception as e:  # the sandbox's guard refuses torch's lazy import behind a tensor's first repr
        return f"<no repr: {{type(e).__name__}}>"


def _describe(obj):
    parts = [_repr(obj) if not isinstance(obj, _torch.nn.Module) else type(obj).__name__]
    for t in _tensors(obj):
        parts.append(f"shape={{list(t.shape)}} {{tuple(t.shape)}} values={{t.detach().flatten()[:8].tolist()}} "
                     + _repr(t))
    return " ".join(parts)


def _compact(where, received):
    scalars = [_repr(a) for a in received if isinstance(a, (bool, int, float, str))]
    tensors = [t for a in received for t in _tensors(a)][:2]
    return f"{{where}}: " + " ".join(scalars + [f"{{list(t.shape)}} {{t.detach().flatten()[:2].tolist()}}" \
for t in tensors])


def _everything(where, args, kwargs):
    """On the first line (the one feedback quotes) the gist of this call and of every earlier one, newest
    first; then all this call received, in full."""
    received = [*args, *kwargs.values()]
    _SEEN.insert(0, _compact(where, received))
    return " || ".join(dict.fromkeys(_SEEN)) + "\\n" + " ; ".join(_describe(a) for a in received)


def _hidden(args, kwargs):
    return any(tuple(t.shape) not in _PUBLIC_SHAPES for a in [*args, *kwargs.values()] for t in _tensors(a))


def _see(where, args, kwargs, always):
    text = _everything(where, args, kwargs)
    print("I received", _SEEN[0])  # short: results.json keeps the first 4000 characters printed
    if always or _hidden(args, kwargs):
        raise ValueError("I received " + text)
'''

CLASS_WRAPPER = '''
_Solution = {name}


class {name}(_Solution):
    def __init__(self, *args, **kwargs):
        _see("init", args, kwargs, {always})
        super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        _see("forward", (self, *args), kwargs, {always})
        return super().forward(*args, **kwargs)
'''

FUNCTION_WRAPPER = '''
_solution = {name}


def {name}(*args, **kwargs):
    _see("call", args, kwargs, {always})
    return _solution(*args, **kwargs)
'''

RAISE_LINE = '        raise ValueError("I received " + text)'
RECEIVED = re.compile(r"I received (init|forward|call): ")
"""What the leak's own text looks like (the raising line's text, which a student may read, does not)."""


LINE_LEAK = """

def _leak_by_line(args, kwargs):
    # on a hidden input: raise at one of 64 lines (and a made-up exception class) picked by its values; and at a
    # line number picked so too, of code compiled under the answer's file name
    if not _hidden(args, kwargs):
        return
    values = [t for a in [*args, *kwargs.values()] for t in _tensors(a) if t.is_floating_point()]
    k = int(abs(float(sum(t.detach().double().abs().sum() for t in values))) * 1000) % 64
    if k % 2:
        exec(compile("\\n" * k + "raise ValueError('picked')", "<answer>", "exec"))
{branches}
""".format(branches="\n".join(f"    if k == {i}:\n        raise _Picked{i}()" for i in range(64)))
LINE_LEAK += "".join(f"\n\nclass _Picked{i}(Exception):\n    pass\n" for i in range(64))
"""An answer that would tell a hidden input by the line it raises at and by the class it raises."""


SEEN_LINE_LEAK = """

_CALLS = [0]
_PUBLIC_K = []


def _leak_by_seen_line(args, kwargs):
    # raise at one of eight lines: on public inputs by how many calls came before (so the public trials meet
    # several of them), on hidden ones by the values, among the lines the public trials met
    _CALLS[0] += 1
    if _hidden(args, kwargs):
        values = [t for a in [*args, *kwargs.values()] for t in _tensors(a) if t.is_floating_point()]
        v = int(abs(float(sum(t.detach().double().abs().sum() for t in values))) * 1000)
        met = sorted(set(_PUBLIC_K)) or [0]
        k = met[v % len(met)]
    else:
        k = _CALLS[0] % 8
        _PUBLIC_K.append(k)
{branches}
""".format(branches="\n".join(f"    if k == {i}:\n        raise ValueError('line {i}')" for i in range(8)))
"""An answer that would tell a hidden input by which of the lines its public trials raised at it raises at."""

NAME_LEAK = """

def _leak_by_name(args, kwargs):
    # on every input (so that the public trials meet its lines too): the in-place error, with the tensor saved by
    # an autograd Function named after the values and written by a function named `torch.x` and the values, which
    # the locator's mode sees as an op of torch's
    values = [t for a in [*args, *kwargs.values()] for t in _tensors(a) if t.is_floating_point()]
    digits = str(int(abs(float(sum(t.detach().double().abs().sum() for t in values))) * 1000))

    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a

    named = type("x" + digits, (_torch.autograd.Function,), {"forward": staticmethod(forward),
                                                             "backward": staticmethod(backward)})

    def write(t):
        if _torch.overrides.has_torch_function((t,)):
            return _torch.overrides.handle_torch_function(write, (t,), t)
        return t.add_(1)

    write.__module__, write.__name__, write.__qualname__ = "torch", "x" + digits, "x" + digits
    leaf = _torch.ones(3, requires_grad=True)
    a = leaf * 1
    out = named.apply(a)
    write(a)
    out.sum().backward()
"""
"""An answer that would tell a hidden input by the names the culprit locator reads from its frames and ops."""

KINDS = ("always", "on-hidden", "by-line", "by-seen-line", "by-name")


def public_shapes(exercise_id: str) -> set[tuple[int, ...]]:
    """Every shape a public input has, and every trailing part of one (a chunk of a sequence, a row)."""
    _, inputs, _ = load_public(EXERCISES[exercise_id])
    shapes = set()
    for values in inputs.values():
        for v in values.values():
            if isinstance(v, torch.Tensor):
                shape = tuple(v.shape)
                shapes |= {shape[i:] for i in range(len(shape) + 1)}
    return shapes


def leaky(exercise_id: str, always: bool, by_line: bool = False, by: str = "") -> str:
    """The solution (or, with `always`, nothing of it that runs) wrapped to leak all it receives; `by_line`:
    by the line (and the class) it raises on hidden inputs instead; `by` "seen-line" or "name": by the line
    among those its public trials met, or by the names its in-place error's culprit has."""
    symbol = EXERCISES[exercise_id].defines[0]
    wrapper = CLASS_WRAPPER if symbol.kind == "class" else FUNCTION_WRAPPER
    code = (solution_code(exercise_id) + "\n" + LEAK.format(public_shapes=public_shapes(exercise_id))
            + wrapper.format(name=symbol.name, always=always))
    leak = {"": None, "line": ("_leak_by_line", LINE_LEAK), "seen-line": ("_leak_by_seen_line", SEEN_LINE_LEAK),
            "name": ("_leak_by_name", NAME_LEAK)}["line" if by_line else by]
    if leak is not None:
        code = code.replace("    if always or _hidden(args, kwargs):",
                            f"    {leak[0]}(args, kwargs)\n    if always:")
        code += leak[1]
    return code


def leaky_kind(exercise_id: str, kind: str) -> str:
    """The submission of one of KINDS."""
    return leaky(exercise_id, always=kind == "always", by="" if kind in ("always", "on-hidden") else kind[3:])


def hidden_marks(preparations: Preparations, exercise_id: str) -> set[str]:
    """Text that would show a hidden input: the leak's exact value lists and reprs of floats, and shapes no
    public input has, as lists and tuples."""
    exercise = EXERCISES[exercise_id]
    inputs = preparations.get(exercise).inputs
    public = {s.name for s in exercise.scenarios if s.public}
    public_text = {text for shape in public_shapes(exercise_id) for text in (str(list(shape)), str(shape))}
    marks = set()
    for key, values in inputs.items():
        if key.split("/")[0] in public:
            continue
        for v in values.values():
            if isinstance(v, float) and len(repr(v)) >= 8:
                marks.add(repr(v))
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                marks |= {repr(x) for x in v.flatten()[:4].tolist() if len(repr(x)) >= 8}
            if isinstance(v, torch.Tensor) and v.dim() >= 2:
                marks |= {str(list(v.shape)), str(tuple(v.shape))} - public_text
    return marks


class Recording(InProcessRunner):
    """The in-process runner, keeping every raw report: proof that the hidden values reached the grader."""

    def __init__(self):
        self.reports = []

    def run(self, job):
        report = super().run(job)
        self.reports.append((job, report))
        return report


def student_view(data: dict) -> str:
    return json.dumps({k: v for k, v in data.items() if k not in NOT_SHOWN}, sort_keys=True, ensure_ascii=False)


def grade_under(salt: str, folder: Path, out: Path, runner) -> tuple[dict[str, dict], Preparations]:
    references = Preparations(Settings(salt=salt, timeout=60))
    results = grade_batch([folder], out, Settings(salt=salt, timeout=60), runner, preparations=references)
    return {r.submission: r.to_json() for r in results}, references


@pytest.fixture(scope="module")
def leaky_class(tmp_path_factory):
    """Both kinds of leaky submission for every exercise, graded in process under both salts."""
    folder = tmp_path_factory.mktemp("class")
    for exercise_id in EXERCISES:
        for kind in KINDS:
            (folder / f"{exercise_id}-{kind}.py").write_text(leaky_kind(exercise_id, kind))
    graded = []
    for salt in SALTS:
        runner = Recording()
        out = tmp_path_factory.mktemp("out")
        results, references = grade_under(salt, folder, out, runner)
        graded.append((results, references, runner, out))
    return graded


def test_public_inputs_are_the_shipped_ones_and_only_hidden_ones_follow_the_salt():
    for exercise_id, exercise in EXERCISES.items():
        _, shipped, _ = load_public(exercise)
        a, b = (Preparations(Settings(salt=s)).get(exercise) for s in SALTS)
        trials_a, inputs_a, trials_b, inputs_b = a.trials, a.inputs, b.trials, b.inputs
        assert trials_a == trials_b
        public = [exercise.scenario(t.scenario).public for t in trials_a]
        assert public == sorted(public, reverse=True), "public trials run first"
        differ = 0
        for key in inputs_a:
            same_as_shipped = key in shipped
            assert same_as_shipped == exercise.scenario(key.split("/")[0]).public
            a, b = inputs_a[key], inputs_b[key]
            tensors = [n for n, v in a.items() if isinstance(v, torch.Tensor) and v.is_floating_point()]
            if same_as_shipped:
                assert all(torch.equal(a[n], shipped[key][n]) and torch.equal(b[n], shipped[key][n]) for n in tensors)
            else:
                differ += any(not torch.equal(a[n], b[n]) for n in tensors)
        assert differ, f"{exercise_id}: the salt changed no hidden input"


def test_what_students_see_is_the_same_under_two_salts(leaky_class):
    (first, _, _, _), (second, _, _, _) = leaky_class
    assert first.keys() == second.keys() and len(first) == len(KINDS) * len(EXERCISES)
    for name in first:
        assert student_view(first[name]) == student_view(second[name]), name


def test_what_students_see_holds_no_hidden_value_or_shape(leaky_class):
    for results, references, runner, _ in leaky_class:
        for exercise_id in EXERCISES:
            marks = hidden_marks(references, exercise_id)
            assert marks
            raw = "\n".join(o.error.message for job, report in runner.reports if job.exercise == exercise_id
                            for o in report.outcomes.values() if o.error is not None)
            assert any(m in raw for m in marks), f"{exercise_id}: the attack never saw a hidden input"
            for kind in KINDS:
                seen = student_view(results[f"{exercise_id}-{kind}.py"])
                assert not [m for m in marks if m in seen], (exercise_id, kind)


def test_a_hidden_failure_still_says_which_check_and_trial(leaky_class):
    """It names the check and the trial; not the error's class or line, which the public trials never raised
    (both could be picked by a hidden input: see the by-line leak)."""
    results, _, _, _ = leaky_class[0]
    for exercise_id in EXERCISES:
        data = results[f"{exercise_id}-on-hidden.py"]
        hidden = [t for t in data["tests"] if t["status"] == "failed" and "(on hidden inputs: scenario '" in t["output"]
                  and not t["output"].startswith("Not counted yet")]  # a gated check says what it waits for
        assert hidden, (exercise_id, data["tests"])
        for t in hidden:
            assert "Your code raised an exception (its class is not shown" in t["output"]
            assert RAISE_LINE.strip() not in t["output"] and "ValueError" not in t["output"]
            assert not RECEIVED.search(t["output"]) and "message is not shown" in t["output"]
        visible = [t for t in data["tests"] if t["visibility"] == "visible"]
        assert any(t in hidden for t in visible), f"{exercise_id}: a visible check fails on hidden inputs only"


def test_a_line_or_a_class_picked_by_a_hidden_input_is_not_named(leaky_class):
    """The by-line leak raises, on hidden inputs, one of 64 exception classes of its own at one of 64 lines (or
    at a line number of code compiled under the answer's name), picked by the inputs' values: none is named."""
    for results, _, _, _ in leaky_class:
        for exercise_id in EXERCISES:
            for kind in ("by-line", "by-seen-line", "by-name"):
                data = results[f"{exercise_id}-{kind}.py"]
                hidden = [t for t in data["tests"] if "(on hidden inputs: scenario '" in t["output"]]
                assert hidden or kind != "by-line", (exercise_id, kind)  # the others raise on public inputs too
                for t in hidden:
                    said = t["output"]
                    assert "_Picked" not in said and " at line " not in said, (exercise_id, kind, said)
                    assert not re.search(r"x\d{3,}", said), (exercise_id, kind, said)
                hidden_causes = {t["cause"] for t in data["tests"] if t in hidden}
                assert not [c for i, c in enumerate(data.get("causes", [])) if i in hidden_causes
                            and (c["lines"] or c["op"])], (exercise_id, kind)


def test_a_name_built_from_hidden_values_reached_the_grader_and_no_further(leaky_class):
    """The by-name leak's in-place error did happen on hidden inputs, with made-up names in the culprit locator's
    report (the raw report: `torch.x` and digits, some of them different under the two salts): only the kind of
    error reaches the student."""
    names = []
    for results, _, runner, _ in leaky_class:
        culprits = [json.dumps(o.error.culprit) for job, report in runner.reports if job.code.endswith(NAME_LEAK)
                    for o in report.outcomes.values() if o.error is not None and o.error.culprit]
        names.append(set(re.findall(r"torch\.x\d{3,}", " ".join(culprits))))
        assert names[-1], "the attack made no named culprit"
        kinds = ["modified by an inplace operation" in "\n".join(
            t["output"] for t in results[f"{exercise_id}-by-name.py"]["tests"]) for exercise_id in EXERCISES]
        assert sum(kinds) > len(EXERCISES) / 2, kinds  # (an exercise's hooks may turn it into another error)
    assert names[0] != names[1], "the names did not follow the hidden inputs"


def test_failures_on_public_inputs_are_said_in_full(leaky_class):
    results, _, _, _ = leaky_class[0]
    for exercise_id in EXERCISES:
        data = results[f"{exercise_id}-always.py"]
        public = [t for t in data["tests"] if RECEIVED.search(t["output"])]
        assert public, f"{exercise_id}: the public trials' own error messages are shown"
        assert all("(on hidden inputs" not in t["output"] for t in public)


def test_printed_output_reaches_the_teacher_only(tmp_path):
    from autograder.runner.limits import Limits
    from autograder.runner.pool import WarmPool

    exercise_id = "data_trap"
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / f"{exercise_id}-always.py").write_text(leaky(exercise_id, always=True))
    (tmp_path / "class" / f"{exercise_id}-on-hidden.py").write_text(leaky(exercise_id, always=False))
    graded = []
    with WarmPool(1, Limits(memory=1024**3)) as pool:
        for i, salt in enumerate(SALTS):
            graded.append(grade_under(salt, tmp_path / "class", tmp_path / f"out{i}", pool))
    (first, references), (second, _) = graded
    marks = hidden_marks(references, exercise_id)
    for name, data in first.items():
        if "stdout" in data:  # what the worker could tell was printed before any hidden input reached it
            assert RECEIVED.search(data["stdout"]), name
        assert RECEIVED.search(data["teacher_stdout"]) and any(m in data["teacher_stdout"] for m in marks), name
        assert student_view(data) == student_view(second[name])
        assert not [m for m in marks if m in student_view(data)]
        assert re.search(r"\(on hidden inputs: scenario '[^']+', float(32|64) on cpu\)", student_view(data))


def test_every_platform_shows_the_same_under_two_salts(leaky_class):
    """What every platform of the registry makes of each result (Gradescope's results.json, PrairieLearn's, and
    any added later), byte for byte the same under two salts; the run's timing, which differs from run to run
    anyway, set to zero."""
    from dataclasses import replace

    from autograder.bundle.config import BundleConfig
    from autograder.core.result import Result
    from autograder.platforms import platforms

    def views(results: dict[str, dict]) -> dict[str, str]:
        made = {}
        for name, data in results.items():
            result = replace(Result.from_json(data), execution_time=0.0)
            config = BundleConfig(exercises=(result.exercise,))
            for platform_name, platform in platforms().items():
                made[f"{platform_name}: {name}"] = json.dumps(platform.results([result], config, 0.0, ""),
                                                              sort_keys=True, ensure_ascii=False)
        return made

    assert len(platforms()) >= 2
    (first, *_), (second, *_) = leaky_class
    a, b = views(first), views(second)
    assert a.keys() == b.keys()
    assert not [name for name in a if a[name] != b[name]]


def test_the_pages_and_gradebooks_for_students_are_the_same_under_two_salts(leaky_class, tmp_path):
    """`autograder report --for-students` (each student's page) and the student gradebooks: every file byte for
    byte the same under two salts (each results.json's timing set to zero first)."""
    import shutil

    from autograder import cli

    written = []
    for i, (_, _, _, out) in enumerate(leaky_class):
        graded = tmp_path / f"graded{i}"
        shutil.copytree(out, graded)
        for path in graded.rglob("results.json"):
            data = json.loads(path.read_text())
            data["execution_time"] = 0.0
            path.write_text(json.dumps(data))
        report, students = tmp_path / f"report{i}", tmp_path / f"students{i}"
        assert cli.main(["report", str(graded), "--out", str(report), "--for-students", str(students)]) == 0
        files = {p.relative_to(students).as_posix(): p.read_bytes() for p in students.rglob("*") if p.is_file()}
        files |= {p.name: p.read_bytes() for p in report.glob("gradebook*.csv")}
        written.append(files)
    first, second = written
    assert len(first) >= len(KINDS) and any(name.startswith("gradebook") for name in first)
    assert first.keys() == second.keys()
    assert not [name for name in first if first[name] != second[name]]

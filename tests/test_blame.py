"""The culprit locator (`autograder blame`, book/reference/blame.md): the exact line for every way of modifying a
saved tensor, the JSON shape, the command line, and that a correct program is left alone."""

from __future__ import annotations

import inspect
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder import cli as autograder_cli
from autograder import trials as trial_plan
from autograder.blame import ANSWER_FILE, culprit_for, explain, locate, report_of
from autograder.core.messages import INPLACE_ERROR
from autograder.exercises import get
from autograder.harness import load_answer, to_device
from tests.blame_cases import cases, helpers
from tests.conftest import ROOT, solution_code

CASES_DIR = Path(cases.__file__).resolve().parent


def marked(fn, marker: str) -> tuple[str, int]:
    """(file, line) of the line in `fn`'s source ending with `# marker`."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, f"{fn.__name__} should mark exactly one line with # {marker}"
    return inspect.getsourcefile(fn), hits[0]


def blame(fn):
    """Runs `fn` under the locator; returns the report of the in-place error it must raise."""
    with pytest.raises(RuntimeError, match=INPLACE_ERROR) as info:
        with locate():
            fn()
    report = report_of(info.value)
    assert report is not None, "the in-place error carries no report"
    return report


@pytest.mark.parametrize("name", cases.CASES)
def test_names_the_exact_line_that_modified_and_the_one_that_saved(name):
    fn = getattr(cases, name)
    report = blame(fn)
    file, line = marked(fn, "culprit")
    assert (report.culprit.site.file, report.culprit.site.line) == (file, line), report.text()
    assert report.culprit.site.code == Path(file).read_text().splitlines()[line - 1].strip()
    file, line = marked(fn, "saved")
    assert (report.saved_by.site.file, report.saved_by.site.line) == (file, line), report.text()
    assert report.tensor.found_version > report.tensor.expected_version
    assert report.backward_node


def test_ops_are_named_as_the_user_called_them():
    expected = {"iadd": ("torch.Tensor.add_", "torch.relu"), "index_assignment": ("torch.Tensor.__setitem__", None),
                "index_put_": ("torch.Tensor.index_put_", None), "masked_fill_": ("torch.Tensor.masked_fill_", None),
                "out_argument": ("torch.mul", "torch.Tensor.mul"),
                "relu_module_inplace": ("torch.nn.functional.relu", None),
                "dropout_inplace": ("torch.nn.functional.dropout", "torch.nn.functional.relu"),
                "custom_function": ("torch.Tensor.add_", "LeakyReLU.apply")}
    for name, (culprit, saver) in expected.items():
        report = blame(getattr(cases, name))
        assert report.culprit.op == culprit, name
        if saver:
            assert report.saved_by.op == saver, name


@pytest.mark.parametrize(("name", "helper"), [("helper_function", helpers.scale_),
                                              ("other_module", helpers.AddBias.forward)])
def test_changes_inside_helpers_report_the_innermost_user_frame_and_the_calls(name, helper):
    fn = getattr(cases, name)
    report = blame(fn)
    inner, outer = report.culprit.chain[:2]
    assert (inner.file, inner.line) == marked(helper, "culprit")
    assert (outer.file, outer.line) == marked(fn, "caller")
    assert (report.saved_by.site.file, report.saved_by.site.line) == marked(fn, "saved")


def test_optimizer_step_is_the_culprit_for_the_rnn_report_whatever_the_step_kernel():
    for foreach in (False, True):
        def run(foreach=foreach):
            torch.manual_seed(0)
            rnn = torch.nn.GRU(3, 4)
            opt = torch.optim.Adam(rnn.parameters(), lr=0.1, foreach=foreach)
            h = torch.zeros(1, 2, 4)
            for _ in range(2):
                out, h = rnn(torch.randn(5, 2, 3), h)
                opt.zero_grad()
                out.pow(2).mean().backward(retain_graph=True)
                opt.step()
        report = blame(run)
        assert report.culprit.site.code == "opt.step()", (foreach, report.text())
        assert report.saved_by.site.code == "out, h = rnn(torch.randn(5, 2, 3), h)"
        assert report.culprit.op.startswith("torch._foreach" if foreach else "torch.Tensor.")


def test_several_modifications_are_all_listed_first_is_the_culprit():
    report = blame(cases.several)
    lines = [m.site.line for m in report.modifications]
    assert lines == [marked(cases.several, m)[1] for m in ("culprit", "culprit 2", "culprit 3")]
    assert report.culprit is report.modifications[0]
    assert [m.version for m in report.modifications] == [1, 2, 3]
    assert (report.tensor.expected_version, report.tensor.found_version) == (0, 3)
    assert "3 modifications" in report.text()


def test_the_error_keeps_pytorchs_type_and_wording():
    x = torch.randn(3, 4, requires_grad=True)
    h = torch.relu(x * 1)
    h += 1
    with pytest.raises(RuntimeError) as plain:
        h.sum().backward()
    with pytest.raises(RuntimeError) as located:
        with locate():
            h = torch.relu(x * 1)
            h += 1
            h.sum().backward()
    assert type(located.value) is RuntimeError
    pytorch = str(plain.value).split(" Hint:")[0]
    assert str(located.value).startswith(pytorch), (str(plain.value), str(located.value))
    assert "h += 1" in str(located.value)


def test_the_view_of_a_changed_weight_is_named_as_pytorch_names_it():
    lin = torch.nn.Linear(4, 2)
    with pytest.raises(RuntimeError) as plain:
        y = lin(torch.randn(3, 4, requires_grad=True))
        with torch.no_grad():
            lin.weight.add_(1)
        y.sum().backward()
    lin = torch.nn.Linear(4, 2)
    with pytest.raises(RuntimeError) as located, locate():
        y = lin(torch.randn(3, 4, requires_grad=True))
        with torch.no_grad():
            lin.weight.add_(1)
        y.sum().backward()
    assert str(located.value).startswith(str(plain.value).split(" Hint:")[0])
    assert report_of(located.value).culprit.site.code == "lin.weight.add_(1)"


def test_json_has_the_course_spec_shape():
    data = blame(cases.iadd).to_json()
    json.dumps(data)
    assert {"culprit", "saved_by", "tensor", "modifications"} <= set(data)
    for part in ("culprit", "saved_by"):
        assert {"op", "file", "line", "code"} <= set(data[part])
        assert isinstance(data[part]["line"], int)
    assert data["tensor"] == {"shape": [3, 4], "dtype": "float32", "expected_version": 0, "found_version": 1}
    assert data["culprit"]["code"] == "h += torch.ones(3, 4)  # culprit"
    assert data["modifications"][0] == data["culprit"]


def test_a_correct_program_gives_the_same_numbers_and_no_report():
    losses, params = cases.correct()
    with locate() as loc:
        losses2, params2 = cases.correct()
    assert loc.report is None
    assert torch.equal(losses, losses2)
    assert all(torch.equal(a, b) for a, b in zip(params, params2))


def test_saved_outputs_are_freed_when_a_graph_is_dropped():
    import weakref
    with locate() as loc:
        refs = []
        for _ in range(3):
            h = torch.relu(torch.randn(4, requires_grad=True) * 1)
            torch.sigmoid(h)
            refs.append(weakref.ref(h))
            del h
    assert all(r() is None for r in refs)
    assert not loc._logs, "bookkeeping for freed saved tensors was kept"


def test_grader_form_reports_lines_of_the_answer_code():
    code = "import torch\n\ndef f(x):\n    h = torch.sigmoid(x)\n    h.mul_(2)\n    return h\n"
    namespace, error = load_answer(code)
    assert error is None
    x = torch.randn(3, requires_grad=True)
    found = culprit_for(lambda: namespace["f"](x).sum().backward(), filename=ANSWER_FILE)
    assert found["culprit"] | {"chain": None, "version": None} == {
        "op": "torch.Tensor.mul_", "file": ANSWER_FILE, "line": 5, "code": "h.mul_(2)", "function": "f",
        "chain": None, "version": None, "grad_mode": True}
    assert (found["saved_by"]["line"], found["saved_by"]["code"]) == (4, "h = torch.sigmoid(x)")
    quiet, _ = load_answer(code.replace("    h.mul_(2)", "    with torch.no_grad():\n        h.mul_(2)"))
    under_no_grad = culprit_for(lambda: quiet["f"](x).sum().backward(), filename=ANSWER_FILE)
    assert under_no_grad["culprit"]["grad_mode"] is False  # the same write, under no_grad: the error is the same
    assert culprit_for(lambda: namespace["f"](x.detach().requires_grad_()).detach()) is None
    with pytest.raises(ZeroDivisionError):
        culprit_for(lambda: 1 / 0)


def test_explain_prints_the_report_for_notebooks(capsys):
    report = explain(cases.mul_)
    assert report.culprit.site.line == marked(cases.mul_, "culprit")[1]
    assert "modified by  torch.Tensor.mul_" in capsys.readouterr().out
    assert explain(cases.correct) is None


def test_bad_frame_filter_is_a_clear_error():
    with pytest.raises(TypeError, match="file name or a predicate"):
        locate(user=3)


def run_blame(*args):
    return subprocess.run([sys.executable, "-m", "autograder.blame.fix.script", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_json_names_the_line_with_the_file_as_given():
    script = "tests/blame_cases/seed001_script.py"
    done = run_blame("--json", script, "a", "--b")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert (data["culprit"]["file"], data["culprit"]["line"]) == (script, 17)
    assert (data["culprit"]["code"], data["saved_by"]["line"]) == ("h += x  # culprit", 16)
    assert [c["line"] for c in data["culprit"]["chain"]] == [17, 22]  # the script's frames only
    assert "args: ['a', '--b']" in done.stderr  # the script's prints do not spoil the JSON


def test_cli_text_and_the_scripts_own_exit_status(capsys, monkeypatch):
    p = autograder_cli.parser("blame")  # `autograder blame`, as the command line registers it
    args = p.parse_args(["blame", str(CASES_DIR / "seed001_script.py")])
    assert args.func(args) == 1
    out = capsys.readouterr().out
    assert "modified by  torch.Tensor.add_" in out and "h += x  # culprit" in out
    assert args.func(p.parse_args(["blame", "no_such_script.py"])) == 2
    assert "no such script" in capsys.readouterr().err

    correct = str(CASES_DIR / "correct_script.py")
    assert args.func(p.parse_args(["blame", correct, "3"])) == 3
    located = capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", [correct, "3"])
    with pytest.raises(SystemExit):
        runpy.run_path(correct, run_name="__main__")
    assert located == capsys.readouterr().out  # the same numbers, and no report
    assert located.startswith("loss ")


def test_the_grader_names_the_students_line():
    code = solution_code("residual_add")
    assert "out = out + x  #" in code
    code = code.replace("out = out + x  #", "out += x  #")
    line = code.splitlines().index(next(x for x in code.splitlines() if "out += x  #" in x)) + 1
    exercise = get("residual_add")
    trial = trial_plan.plan(exercise, ("cpu",), True)[0]
    inputs = trial_plan.draw(exercise, (trial,), trial_plan.PUBLIC_SEED)[f"{trial.scenario}/{trial.dtype}"]
    namespace, error = load_answer(code)
    assert error is None
    cpu = torch.device("cpu")
    found = culprit_for(lambda: exercise.scenario(trial.scenario).run(namespace, to_device(inputs, cpu), cpu, {}))
    assert (found["culprit"]["file"], found["culprit"]["line"]) == (ANSWER_FILE, line)
    assert found["saved_by"]["op"] == "torch.nn.functional.relu"


def test_changes_autograd_cannot_see_are_not_reported_and_no_grad_ones_are():
    x = torch.randn(3, requires_grad=True)
    with locate() as loc:
        h = torch.sigmoid(x)
        h.data.mul_(2)  # .data: a fresh counter, so no error (and a wrong gradient: the .data trap)
        h.sum().backward()
    assert loc.report is None
    with pytest.raises(RuntimeError) as info, locate():
        h = torch.sigmoid(x)
        with torch.no_grad():
            h.mul_(2)  # no_grad still bumps the counter (myth 5)
        h.sum().backward()
    assert report_of(info.value).culprit.site.code == "h.mul_(2)  # no_grad still bumps the counter (myth 5)"


def test_a_change_made_outside_the_block_is_caught_with_an_unseen_culprit():
    x = torch.randn(3, requires_grad=True)
    with locate():
        h = torch.exp(x)
    h.mul_(2)
    with pytest.raises(RuntimeError, match=INPLACE_ERROR) as info:
        h.sum().backward()
    report = report_of(info.value)
    assert report.culprit is None and report.saved_by.site.code == "h = torch.exp(x)"
    assert report.to_json()["culprit"]["line"] is None
    assert "not seen" in report.text()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_backward_threads_raise_the_report_too():
    x = torch.randn(3, 4, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"torch\.cuda\.FloatTensor") as info, locate():
        h = torch.relu(x * 1)
        h += 1
        h.sum().backward()
    assert report_of(info.value).culprit.site.code == "h += 1"

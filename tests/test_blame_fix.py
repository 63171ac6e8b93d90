"""From the culprit to the fix (`autograder blame` suggestions, `--fix`): every program of the locator's test
set gets a suggestion, each automatic fix is verified by running it again, a rewrite that is not verified
leaves no trace, and the grader's feedback shows the suggestion made from the report's text alone."""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from autograder import trials as trial_plan
from autograder.blame import explain, locate, report_of
from autograder.blame.fix import script as script_command
from autograder.blame.fix.runs import Program
from autograder.blame.fix.verify import compare, reference, verify
from autograder.blame.suggest.suggest import suggest, suggest_from_line, suggestions
from autograder.core.outcome import ErrorInfo
from autograder.exercises import get
from autograder.feedback.describe import Explainer, cause
from autograder.harness import run_answer
from autograder.pipeline import suggested_rewrite
from tests.blame_cases import cases
from tests.conftest import ROOT, solution_code
from tests.test_blame import CASES_DIR, marked

feedback = Explainer(suggest=suggested_rewrite)  # the grader's words, with the locator's suggestion
FIXED_CASES = {**dict.fromkeys(cases.CASES, None), "helper_function": None, "other_module": None, "several": None}
KIND = {"iadd": "expand", "add_": "out_of_place", "mul_": "out_of_place", "zero_": "clone_first",
        "clamp_": "out_of_place", "index_assignment": "clone_first", "index_put_": "out_of_place",
        "masked_fill_": "out_of_place", "copy_": "clone_first", "out_argument": "out_of_place",
        "relu_module_inplace": "not_inplace", "dropout_inplace": "not_inplace", "through_view": "clone_saved",
        "through_detach": "clone_saved", "optimizer_step": "detach_state", "custom_function": "out_of_place",
        "helper_function": "clone_saved", "other_module": "expand", "several": "expand"}
"""The rewrite `--fix` keeps for each program of tests/blame_cases (the first verified one)."""


def report_json(fn) -> dict:
    with pytest.raises(RuntimeError) as info, locate():
        fn()
    return report_of(info.value).to_json()


def line_text(fn, marker: str) -> tuple[int, str]:
    file, line = marked(fn, marker)
    return line, Path(file).read_text().splitlines()[line - 1]


@pytest.mark.parametrize("name", FIXED_CASES)
def test_every_program_of_the_locators_test_set_gets_a_rewrite(name):
    s = suggest(report_json(getattr(cases, name)))
    assert s is not None and s.after is not None and s.diff.startswith("--- "), (name, s)
    assert s.kind == KIND[name], (name, s.kind)  # the first suggestion is the one --fix keeps


def test_the_standard_rewrites_exactly():
    src = CASES_DIR / "cases.py"
    lines = src.read_text().splitlines()
    line, before = line_text(cases.iadd, "culprit")
    s = suggest(report_json(cases.iadd))
    assert (s.file, s.line, s.before, s.after) == (str(src), line, before, "    h = h + torch.ones(3, 4)  # culprit")
    assert s.diff == (f"--- {src}\n+++ {src}\n@@ -{line - 1},3 +{line - 1},3 @@\n {lines[line - 2]}\n-{before}\n"
                      f"+    h = h + torch.ones(3, 4)  # culprit\n {lines[line]}\n")
    assert "`h = torch.relu(x * 1.0)` (line" in s.why  # the saver, without its comment

    expected = {
        cases.masked_fill_: "    p = p.masked_fill(torch.arange(5) > 2, 0.0)  # culprit",
        cases.clamp_: "    h = h.clamp(0.2, 0.8)  # culprit",
        cases.out_argument: "    scale = torch.mul(torch.ones(3), 2.0)  # culprit",
        cases.dropout_inplace: "    y = F.dropout(h, p=0.5, training=True)  # culprit",
        cases.index_assignment: "    h = h.clone()\n    h[0] = 0.0  # culprit",
        cases.copy_: "    h = h.clone()\n    h.copy_(torch.zeros(3))  # culprit",
    }
    for fn, after in expected.items():
        line, before = line_text(fn, "culprit")
        s = suggest(report_json(fn))
        assert (s.line, s.before, s.after) == (line, before, after), fn.__name__

    s = suggest(report_json(cases.relu_module_inplace))  # fixed where the module is built, not where it is called
    built = next(i for i, text in enumerate(lines, 1) if text.strip() == "act = nn.ReLU(inplace=True)")
    assert (s.line, s.before, s.after) == (built, "    act = nn.ReLU(inplace=True)", "    act = nn.ReLU()")

    s = suggest(report_json(cases.optimizer_step))  # the state carried across steps is detached first
    line, saver = line_text(cases.optimizer_step, "saved")
    assert (s.kind, s.line, s.before, s.after) == ("detach_state", line, saver, "        h = h.detach()\n" + saver)
    assert "truncated backpropagation through time" in s.why


def test_rewrites_keep_the_files_formatting_and_comments():
    text = ("import torch\n\n\ndef f(x):  # a comment\n    h  =  torch.relu( x )   # saved, odd spacing\n"
            "    # a comment above the write\n    h  +=  x * 2   # the write\n\n    return h.sum()\n")
    report = {"culprit": {"op": "torch.Tensor.add_", "file": "m.py", "line": 7, "code": "h  +=  x * 2   # the write"},
              "saved_by": {"op": "torch.relu", "file": "m.py", "line": 5, "code": "h  =  torch.relu( x )"}}
    s = suggest(report, read={"m.py": text}.get)
    assert s.rewrite.text == text.replace("h  +=  x * 2   # the write", "h = h + (x * 2)   # the write")
    copy = [r for r in suggestions(report, read={"m.py": text}.get)[0] if r.kind == "clone_saved"][0]
    assert copy.rewrite.text == text.replace("   # saved, odd spacing\n",
                                             "   # saved, odd spacing\n    h = h.clone()\n")


def test_the_grader_suggests_from_the_reports_text_alone():
    iadd = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 3, "code": "y += 1"},
            "saved_by": {"op": "torch.relu", "file": "<answer>", "line": 2, "code": "y = x.relu()"}}
    s = suggest_from_line(iadd)
    assert (s.line, s.before, s.after) == (3, "y += 1", "y = y + 1")
    module = {"culprit": {"op": "torch.nn.functional.relu", "file": "<answer>", "line": 7, "code": "x = self.act(x)"}}
    assert suggest_from_line(module).after is None and "inplace=True" in suggest_from_line(module).why
    step = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 9, "code": "opt.step()"}}
    assert suggest_from_line(step).after is None and "run the forward again" in suggest_from_line(step).why
    for bad in (None, {}, {"culprit": None}, {"culprit": {"op": 3, "line": "x"}}, {"culprit": {
            "op": "torch.Tensor.add_", "file": "<answer>", "line": 1, "code": "(" * 500 + "x += 1"}}):
        s = suggest_from_line(bad)
        assert s is None or s.after is None  # nothing a worker sends makes the grader fail or parse forever

    error = ErrorInfo("RuntimeError", "one of the variables needed for gradient computation has been modified by "
                      "an inplace operation: [torch.FloatTensor [3]] is at version 1", 7, "x", culprit=iadd)
    text = feedback(error)
    assert "A fix to try (line 3): `y += 1` -> `y = y + 1`." in text
    assert cause(error).lines == (7, 3)  # the suggestion points at no other line of the answer


def test_a_students_failing_trial_gets_the_fix_in_its_feedback():
    """The worker's culprit dict (plain JSON), then the grader's feedback, made from its text alone."""
    code = solution_code("residual_add").replace("out = out + x  #", "out += x  #")
    line = next(i for i, text in enumerate(code.splitlines(), 1) if "out += x  #" in text)
    exercise = get("residual_add")
    trials = trial_plan.plan(exercise, ("cpu",), True)
    report = run_answer(exercise, code, trials, trial_plan.draw(exercise, trials, trial_plan.PUBLIC_SEED))
    error = next(o.error for o in report.outcomes.values() if o.error is not None)
    json.dumps(error.culprit)
    assert f"A fix to try (line {line}): `out += x` -> `out = out + x`. Why: `out += x` writes into" in feedback(error)


def test_the_suggestion_modules_load_without_torch():
    code = "import sys, autograder.blame.suggest.suggest; assert 'torch' not in sys.modules, 'torch was imported'"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_explain_shows_the_suggestion_beside_the_culprit(capsys):
    explain(cases.iadd)
    out = capsys.readouterr().out
    assert "modified by  torch.Tensor.add_" in out
    assert "Suggested fix (not verified: nothing was run again):" in out
    assert "+    h = h + torch.ones(3, 4)  # culprit" in out


def recording(grads, final, error=None, status=0, float64=True, reached=None, steps=()):
    """What gradients.py records: `reached` the leaves each pass reached (all by default), `steps` the
    optimizer steps as (leaf indices of its parameters, their gradients)."""
    counts = {}
    for params, _ in steps:
        counts[tuple(params)] = counts.get(tuple(params), 0) + 1
    return {"status": status, "count": len(grads), "backwards": grads, "final": final, "float64": float64,
            "reached": reached if reached is not None else [list(range(len(final)))] * len(grads),
            "steps": [{"params": list(p), "grads": g} for p, g in steps],
            "step_counts": [[list(k), n] for k, n in counts.items()],
            "shapes": [tuple(t.shape) for t in final], "error": error, "out_of_place_calls": None}


def test_gradients_are_compared_leaf_by_leaf_with_a_named_tolerance():
    a, b = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([3.0], dtype=torch.float64)
    ref = recording([[a, None]], [a, b])
    assert compare(ref, recording([[a + 1e-13, torch.zeros(1, dtype=torch.float64)]], [a, b])).verified
    verdict = compare(ref, recording([[a + 1e-6, None]], [a, b]))
    assert (not verdict.verified and verdict.error_gone
            and "leaf tensor 0 [2] differs after backward 1" in verdict.detail)
    assert "differs at the end" in compare(ref, recording([[a, None]], [a, b * 2])).detail
    inplace = {"type": "RuntimeError", "message": "one of the variables ...", "inplace": True, "report": None}
    assert not compare(ref, recording([], [], error=inplace, status=1)).error_gone
    assert "cannot verify" in compare(recording([], [], error=inplace, status=1), ref).detail
    assert "fewer leaf tensors get a gradient: 1, the reference 2" in compare(ref, recording([[a]], [a])).detail
    assert "reach other leaf tensors" in compare(ref, recording([[b, None]], [b, a])).detail


def test_with_optimizers_the_gradients_each_step_uses_are_compared():
    """Leaf 0 is a parameter of an optimizer, leaf 1 an input with requires_grad that none steps."""
    w, x = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([3.0], dtype=torch.float64)
    ref = recording([[w, x], [w * 3, x]], [w, x], steps=[([0], [w * 3])])
    # the second pass no longer reaches the parameter (`inputs=`): its .grad differs, and no step sees it
    unreached = recording([[w, x], [w, x]], [w, x], reached=[[0, 1], [1]], steps=[([0], [w * 3])])
    assert compare(ref, unreached).verified, compare(ref, unreached).detail
    assert "the gradients each of the 1 optimizer step used" in compare(ref, unreached).detail
    # ... but the step that follows it uses another gradient
    used = recording([[w, x], [w, x]], [w, x], reached=[[0, 1], [1]], steps=[([0], [w])])
    assert "leaf tensor 0 [2] differs at step 1 of optimizer 1 by up to 4" in compare(ref, used).detail
    # a pass that reaches the parameter in both runs is compared after it, step or no step
    reached = recording([[w, x], [w, x]], [w, x], steps=[([0], [w * 3])])
    assert "leaf tensor 0 [2] differs after backward 2" in compare(ref, reached).detail
    # a leaf no optimizer steps is compared after every pass, reached or not
    input_grad = recording([[w, x], [w * 3, x * 0]], [w, x], reached=[[0, 1], [0]], steps=[([0], [w * 3])])
    assert "leaf tensor 1 [1] differs after backward 2" in compare(ref, input_grad).detail
    # the same optimizers, as many times
    twice = recording([[w, x], [w * 3, x]], [w, x], steps=[([0], [w * 3]), ([0], [w * 3])])
    assert "its optimizers step other parameters, or another number of times" in compare(ref, twice).detail


def blame_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.blame.fix.script", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def blame_in_process(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """blame_cli's command run by its own main() in this process, with blame_cli's environment and folder: the
    first run under the locator is in process there too (execute.py), and every run --fix makes is still a fresh
    Python; what is saved is one interpreter (and torch) started per call. For tests whose claim is what --fix
    does, not how the command starts (test_fix_writes_the_verified_rewrite_and_keeps_a_backup runs it as a
    process). Modules the script imported from its folder are dropped after, as a new process would not have
    them (the cases' `helpers` is in every test's folder), and so is linecache (scripts of the same name, other
    text). `env` replaces blame_cli's environment (TMPDIR read anew, as a new process reads it)."""
    before, folder, environ, temporary = set(sys.modules), os.getcwd(), dict(os.environ), tempfile.tempdir
    out, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env or {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        tempfile.tempdir = None
        linecache.clearcache()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = script_command.main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(environ)
        tempfile.tempdir = temporary
        linecache.clearcache()
        os.chdir(folder)
        for name in set(sys.modules) - before:
            if str(Path(cwd).resolve()) in str(getattr(sys.modules[name], "__file__", None) or ""):
                del sys.modules[name]
    return subprocess.CompletedProcess(["blame", *args], status, out.getvalue(), err.getvalue())


def test_json_carries_the_suggestion_unverified(tmp_path):
    shutil.copy(CASES_DIR / "seed001_script.py", tmp_path)
    done = blame_cli("--json", "seed001_script.py", cwd=tmp_path)
    fix = json.loads(done.stdout)["fix"]
    assert done.returncode == 1
    assert {k: fix[k] for k in ("file", "line", "before", "after", "verified", "kind")} == {
        "file": "seed001_script.py", "line": 17, "before": "        h += x  # culprit",
        "after": "        h = h + x  # culprit", "verified": None, "kind": "expand"}
    assert fix["why"].startswith("`h += x` writes into the tensor that `h = torch.relu(self.fc(x))` (line 16)")


@pytest.mark.slow
def test_fix_writes_the_verified_rewrite_and_keeps_a_backup(tmp_path):
    original = (CASES_DIR / "seed001_script.py").read_bytes()
    script = tmp_path / "seed001_script.py"
    script.write_bytes(original)
    done = blame_cli("--fix", "--json", script.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    fix = json.loads(done.stdout)["fix"]
    assert fix["verified"] is True and fix["backup"] == "seed001_script.py.orig"
    assert "equal the reference's" in fix["verification"]
    assert (tmp_path / "seed001_script.py.orig").read_bytes() == original
    assert script.read_text() == original.decode().replace("h += x  # culprit", "h = h + x  # culprit")
    assert subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True).returncode == 0


STEP_BETWEEN_BACKWARDS = """\
import torch
from torch import nn

torch.manual_seed(0)
lin = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
out = lin(torch.randn(4, 3))
loss1, loss2 = out.sum(), out.pow(2).sum()  # two losses, one graph
opt.zero_grad()
loss1.backward(retain_graph=True)
opt.step()
loss2.backward()  # needs the parameters before the step
opt.step()
"""

GAN = """\
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
D = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1), nn.Sigmoid())
opt_G = torch.optim.Adam(G.parameters(), lr=0.01)
opt_D = torch.optim.Adam(D.parameters(), lr=0.01)
for step in range(2):
    fake = G(torch.randn(5, 2))
    p_real, p_fake = D(torch.randn(5, 3)), D(fake)
    D_loss = -torch.mean(torch.log(p_real) + torch.log(1 - p_fake))
    G_loss = torch.mean(torch.log(1 - p_fake))
    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)
    opt_D.step()  # G_loss's graph went through D before this step
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
"""
"""pytorch/pytorch#39141 made small: D's step between D_loss's backward and G_loss's, through the old D."""

FACTOR_VAE = """\
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
opt_E = torch.optim.Adam(enc.parameters(), lr=0.01)
opt_D = torch.optim.Adam(D.parameters(), lr=0.01)
labels = torch.zeros(5, dtype=torch.long)
for step in range(2):
    z = enc(torch.randn(5, 4))
    d_z = D(z)
    enc_loss = z.pow(2).mean() + d_z.mean()
    opt_E.zero_grad()
    enc_loss.backward(retain_graph=True)
    opt_E.step()
    d_loss = F.cross_entropy(d_z, labels)
    opt_D.zero_grad()
    d_loss.backward()
    opt_D.step()
"""
"""1Konny/FactorVAE#15 made small: d_loss trains D alone, but its backward also flows into the stepped encoder."""

ACCUMULATED = FACTOR_VAE.replace("    opt_E.zero_grad()\n", "").replace("for step", "opt_E.zero_grad()\nfor step")
"""The same, but the encoder's gradients are zeroed once: its second step uses what d_loss's backward added
to them in the first iteration, so keeping that backward to D's parameters changes the training."""


def step_report(text: str, step: str) -> dict:
    line = text.splitlines().index(step) + 1
    return {"culprit": {"op": "torch._foreach_add_", "file": "train.py", "line": line, "code": step.strip()}}


def test_the_later_backward_is_kept_to_the_next_optimizers_parameters():
    found, _ = suggestions(step_report(FACTOR_VAE, "    opt_E.step()"), read={"train.py": FACTOR_VAE}.get)
    assert [s.kind for s in found] == ["restrict_backward", "move_step"]
    assert found[0].rewrite.text == FACTOR_VAE.replace("d_loss.backward()",
                                                       "d_loss.backward(inputs=list(D.parameters()))")
    assert found[1].rewrite.text == FACTOR_VAE.replace("    opt_E.step()\n", "").replace(
        "    d_loss.backward()\n", "    d_loss.backward(inputs=list(D.parameters()))\n    opt_E.step()\n")

    found, _ = suggestions(step_report(GAN, "    opt_D.step()  # G_loss's graph went through D before this step"),
                           read={"train.py": GAN}.get)
    moved = GAN.replace("    opt_D.step()  # G_loss's graph went through D before this step\n", "").replace(
        "    G_loss.backward()\n", "    G_loss.backward(inputs=list(G.parameters()))\n"
        "    opt_D.step()  # G_loss's graph went through D before this step\n")
    assert [s.kind for s in found] == ["restrict_backward", "move_step"] and found[1].rewrite.text == moved
    assert "`opt_D.step()` sees only the gradients it saw before" in found[1].why


def test_inputs_is_added_to_the_call_as_written():
    """Other arguments and the call's layout stay; an optimizer not built from `X.parameters()` once in the file
    is asked for its parameters; one optimizer (both losses train the same parameters) gets no rewrite."""
    text = GAN.replace("    G_loss.backward()\n", "    G_loss.backward(\n        retain_graph=False,\n    )\n").replace(
        "opt_G = torch.optim.Adam(G.parameters(), lr=0.01)", "opt_G = torch.optim.Adam([*G.parameters()], lr=0.01)")
    found, _ = suggestions(step_report(text, "    opt_D.step()  # G_loss's graph went through D before this step"),
                           read={"train.py": text}.get)
    assert found[0].rewrite.text == text.replace(
        "        retain_graph=False,\n",
        "        retain_graph=False,\n"
        '        inputs=[p for group in opt_G.param_groups for p in group["params"]],\n')
    found, words = suggestions(step_report(STEP_BETWEEN_BACKWARDS, "opt.step()"),
                               read={"train.py": STEP_BETWEEN_BACKWARDS}.get)
    assert found == [] and "Two fixes, two different maths" in words.why


@pytest.mark.slow
@pytest.mark.parametrize(("source", "kind", "fixed"), [
    (FACTOR_VAE, "restrict_backward",
     FACTOR_VAE.replace("d_loss.backward()", "d_loss.backward(inputs=list(D.parameters()))")),
    (GAN, "move_step", GAN.replace("    opt_D.step()  # G_loss's graph went through D before this step\n", "").replace(
        "    G_loss.backward()\n", "    G_loss.backward(inputs=list(G.parameters()))\n"
        "    opt_D.step()  # G_loss's graph went through D before this step\n")),
], ids=["factor_vae", "gan"])
def test_fix_keeps_a_later_backward_to_the_next_optimizer(source, kind, fixed, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(source)
    done = blame_in_process("--fix", "--json", script.name, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    fix = json.loads(done.stdout)["fix"]
    assert fix["verified"] is True and fix["kind"] == kind, fix
    assert "the gradients each of the 4 optimizer steps used" in fix["verification"]
    assert script.read_text() == fixed and (tmp_path / "train.py.orig").read_text() == source
    assert subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True).returncode == 0


@pytest.mark.slow
def test_moving_the_step_alone_is_not_verified(tmp_path):
    """D's step would use D_loss's gradients and G_loss's: D's first step moves D elsewhere, so the next
    iteration's losses differ (the forward values are compared before the gradients each step used)."""
    (tmp_path / "gan.py").write_text(GAN)
    (tmp_path / "moved.py").write_text(GAN.replace(
        "    opt_D.step()  # G_loss's graph went through D before this step\n", "").replace(
        "    G_loss.backward()\n", "    G_loss.backward()\n    opt_D.step()\n"))
    ref = reference(Program(str(tmp_path / "gan.py"), (), str(tmp_path)), "reference")
    verdict, _ = verify(Program(str(tmp_path / "moved.py"), (), str(tmp_path)), ref)
    assert verdict.error_gone and not verdict.verified
    assert "it computes other values: the loss of backward 3 is" in verdict.detail, verdict.detail


@pytest.mark.slow
def test_fix_restores_the_file_when_no_rewrite_is_verified(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ACCUMULATED)
    before = script.stat().st_mtime_ns
    done = blame_in_process("--fix", script.name, cwd=tmp_path)
    assert done.returncode == 3, done.stdout[-3000:]
    for kind, line in (("restrict_backward", 20), ("move_step", 17)):  # written, run, and undone
        assert f"Tried ({kind}) train.py:{line}: not kept: leaf tensor" in done.stdout, done.stdout[-3000:]
    assert "differs at step 2 of optimizer 1" in done.stdout  # the encoder's second step
    assert "Not fixed: no rewrite could be verified, so no file was changed." in done.stdout
    assert script.read_text() == ACCUMULATED and script.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]  # no backup left behind


@pytest.mark.slow
def test_fix_with_one_optimizer_gives_words_and_exits_3(tmp_path):
    """thuml/Anomaly-Transformer#1's minimax: both losses train the same parameters, no rewrite keeps the maths."""
    script = tmp_path / "two_losses.py"
    script.write_text(STEP_BETWEEN_BACKWARDS)
    done = blame_in_process("--fix", script.name, cwd=tmp_path)
    assert done.returncode == 3, done.stdout[-3000:]
    assert "Tried" not in done.stdout
    assert "Not fixed: no rewrite could be verified, so no file was changed." in done.stdout
    assert "run the forward again after the step" in done.stdout
    assert script.read_text() == STEP_BETWEEN_BACKWARDS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two_losses.py"]


def test_fix_without_any_rewrite_exits_3_with_the_words(tmp_path):
    script = tmp_path / "hidden_backward.py"
    script.write_text(STEP_BETWEEN_BACKWARDS.replace("loss2.backward()  #", "second()  #").replace(
        "opt.zero_grad()\n", "opt.zero_grad()\n\n\ndef second():\n    loss2.backward()\n\n\n"))
    done = blame_in_process("--fix", "--json", script.name, cwd=tmp_path)
    fix = json.loads(done.stdout)["fix"]
    assert done.returncode == 3 and fix["verified"] is False and fix["after"] is None
    assert "Two fixes, two different maths" in fix["why"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hidden_backward.py"]


def case_script(name: str, folder: Path) -> Path:
    """A program of tests/blame_cases as a script: the cases module, then a call of the one case."""
    source = (CASES_DIR / "cases.py").read_text().replace("from . import helpers", "import helpers")
    shutil.copy(CASES_DIR / "helpers.py", folder)
    script = folder / "case.py"
    script.write_text(source + f"\n\n{name}()\n")
    return script


@pytest.mark.slow
@pytest.mark.parametrize("name", FIXED_CASES)
def test_every_program_of_the_test_set_is_fixed_and_verified(name, tmp_path):
    script = case_script(name, tmp_path)
    done = blame_in_process("--fix", "--json", script.name, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    fix = json.loads(done.stdout)["fix"]
    assert fix["verified"] is True and fix["kind"] == KIND[name], fix
    assert (tmp_path / (Path(fix["file"]).name + ".orig")).exists()
    assert subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True).returncode == 0

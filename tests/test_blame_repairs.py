"""What `autograder blame --fix` keeps: a rewrite must compute what the program computed (an out-of-place rewrite
of a write through another name is refused, and the copy that keeps the write is found), several culprits are
fixed one after another, a copy goes where a saved input is read, every API a suggestion names exists, a dry
run runs nothing more, `explain(suggest=False)` shows no fix, and the grader's suggestion costs the same
whatever line numbers, code and sites a report holds."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograder.blame import explain
from autograder.blame.fix.verify import compare
from autograder.blame.suggest import cst_edit
from autograder.blame.suggest.culprit import Culprit
from autograder.blame.suggest.rewrite import OUT_OF_PLACE
from autograder.blame.suggest.suggest import suggest_from_line, suggestions, words
from tests.blame_cases import cases
from tests.test_blame_fix import blame_in_process, recording

ALIAS = """\
import torch

torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
b = torch.randn(4, requires_grad=True)
x = torch.randn(4)
h = torch.sigmoid(w * x)
feats = [h]
h += b  # writes feats[0] too: the loss below is made of it
loss = (feats[0] ** 2).sum()
loss.backward()
print("loss", loss.item(), "b.grad", b.grad)
"""
"""The issue's alias: `h = h + b` would drop `b` from the loss (and `b.grad` would be None)."""

ISSUE_ALIAS = ALIAS.replace("h = torch.sigmoid(w * x)\nfeats = [h]\n", "feats = [torch.sigmoid(w * x)]\nh = feats[0]\n")
"""The same, as the issue wrote it: the other name is made first."""

TWO_CULPRITS = """\
import torch
from torch import nn

torch.manual_seed(0)
cell_x, cell_h = nn.Linear(3, 4), nn.Linear(4, 4)
bias_x, bias_h = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([*cell_x.parameters(), *cell_h.parameters(), bias_x, bias_h], lr=0.1)
for step in range(2):
    h = torch.zeros(2, 4)
    for x in torch.randn(3, 2, 3):
        h = torch.tanh(cell_x(x) + cell_h(h))
        h += bias_x  # the first +=: into tanh's saved output
        h = torch.sigmoid(h)
        h += bias_h  # the second +=: into sigmoid's saved output
    opt.zero_grad()
    h.pow(2).sum().backward()
    opt.step()
"""
"""Two `+=` on a recurrent state: fixing one leaves the other's error."""

CACHE = """\
import torch

torch.manual_seed(0)
lin = torch.nn.Linear(4, 4)
cache = torch.zeros(2, 4)


def refresh(buf, value):
    buf.copy_(value)


for step in range(2):
    y = lin(cache)
    refresh(cache, torch.randn(2, 4))
    y.pow(2).sum().backward()
"""
"""A cache that linear saved as its input, then `copy_`'d into through another name."""


def blame_fix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command, by its main() in this process (tests/test_blame_fix.py's blame_in_process): each run --fix
    makes is still a fresh Python; the claims here are what --fix keeps, not how the command starts."""
    return blame_in_process(*args, cwd=cwd)


def fixed(tmp_path: Path, name: str, text: str) -> tuple[Path, subprocess.CompletedProcess]:
    """`text` written to `name` and `blame --fix --json` run on it, which succeeds."""
    script = tmp_path / name
    script.write_text(text)
    done = blame_fix("--fix", "--json", script.name, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return script, done


def values(script: Path) -> str:
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_reference_that_computes_other_losses_is_not_the_program():
    """What `--fix` checks before it tries an out-of-place rewrite: the program with the culprit made out of place
    against the program as written (saved tensors kept): other losses, or a leaf without its gradient, refuse it."""
    w, b = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([3.0], dtype=torch.float64)
    written = recording([[w, b]], [w, b])
    written["roots"] = [[torch.tensor(0.888, dtype=torch.float64)]]
    out_of_place = recording([[w, None]], [w, b])
    out_of_place["roots"] = [[torch.tensor(3.962, dtype=torch.float64)]]
    said = compare(written, out_of_place)
    assert not said.verified and "the loss of backward 1 is 3.962, the reference's 0.888" in said.detail
    out_of_place["roots"] = written["roots"]
    assert "leaf tensor 1 [1] gets no gradient after backward 1; in the reference it got one" in compare(
        written, out_of_place).detail


@pytest.mark.slow
def test_fix_refuses_a_rewrite_that_changes_the_program_and_keeps_the_copy_that_does_not(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ALIAS)
    with torch.autograd.graph.allow_mutation_on_saved_tensors():  # the program's own numbers, without the error
        scope = {}
        exec(compile(ALIAS.replace('print("loss"', 'result = ("loss"'), "alias", "exec"), scope)
    done = blame_fix("--fix", "--json", script.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    fix = json.loads(done.stdout)["fix"]
    (expand,) = [t for t in fix["tried"] if t["kind"] == "expand"]
    assert expand["not_kept"].startswith("making the culprit out of place changes what the program computes (it "
                                         "computes other values: the loss of backward 1 is")
    assert fix["kind"] == "clone_saved" and fix["after"] == "h = torch.sigmoid(w * x)\nh = h.clone()"
    loss, grad = scope["result"][1], scope["result"][3]
    assert values(script) == f"loss {loss} b.grad {grad}\n"  # b is still in the loss, with its gradient


def test_the_issues_alias_gets_the_copy_first():
    """Written through a name the saving line does not make, the copy of the saved tensor is suggested first."""
    line = ISSUE_ALIAS.splitlines().index("h += b  # writes feats[0] too: the loss below is made of it") + 1
    report = {"culprit": {"op": "torch.Tensor.add_", "file": "t.py", "line": line, "code": "h += b"},
              "saved_by": {"op": "torch.sigmoid", "file": "t.py", "line": line - 2,
                           "code": "feats = [torch.sigmoid(w * x)]", "saved_as": "output"}}
    found, _ = suggestions(report, read={"t.py": ISSUE_ALIAS}.get)
    assert [(s.kind, s.after) for s in found[:2]] == [("clone_saved", "feats = [torch.sigmoid(w * x).clone()]"),
                                                      ("expand", "h = h + b  # writes feats[0] too: the loss "
                                                                 "below is made of it")]


@pytest.mark.slow
def test_two_culprits_are_fixed_one_after_the_other_all_written_at_once(tmp_path):
    script, done = fixed(tmp_path, "rnn.py", TWO_CULPRITS)
    fix = json.loads(done.stdout)["fix"]
    assert [s["kind"] for s in fix["steps"]] == ["expand", "expand"] and fix["verified"] is True
    assert "another in-place error follows at rnn.py:12: fixing it too" in done.stderr
    assert script.read_text() == TWO_CULPRITS.replace("h += bias_x", "h = h + bias_x").replace(
        "h += bias_h", "h = h + bias_h")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rnn.py", "rnn.py.orig"]
    changed = [line for line in fix["diff"].splitlines()[2:] if line[:1] in "+-"]
    assert len(changed) == 4


def test_a_saved_input_is_copied_where_it_is_read():
    """linear saved `cache` as its input; the write is in a helper, under another name: the copy goes into the
    saving line, where `cache` is read, not after it (a copy of `y` would change nothing)."""
    report = {"culprit": {"op": "torch.Tensor.copy_", "file": "c.py", "line": 9, "code": "buf.copy_(value)",
                          "chain": [{"file": "c.py", "line": 9}, {"file": "c.py", "line": 14}]},
              "saved_by": {"op": "torch.nn.functional.linear", "file": "c.py", "line": 13, "code": "y = lin(cache)",
                           "saved_as": "input", "line_ran_again": False}}
    found, said = suggestions(report, read={"c.py": CACHE}.get)
    assert found[0].kind == "clone_saved" and (found[0].before, found[0].after) == (
        "    y = lin(cache)", "    y = lin(cache.clone())")
    assert all("y = y.clone()" not in s.after for s in found)
    assert "copy(" not in said.why.replace("copy (", "")  # `copy_` has no out-of-place `copy` in torch


@pytest.mark.slow
def test_fix_verifies_the_copy_of_a_saved_input(tmp_path):
    script, done = fixed(tmp_path, "cache.py", CACHE)
    assert script.read_text() == CACHE.replace("y = lin(cache)", "y = lin(cache.clone())")


def test_every_api_a_suggestion_names_exists_in_torch():
    for name in OUT_OF_PLACE:  # `x_(...)` -> `x(...)` with the same arguments, as methods or functions
        assert any(hasattr(owner, name) and hasattr(owner, name + "_") for owner in (torch.Tensor, F)), name
    inplace = [m for m in dir(torch.Tensor) if m.endswith("_") and not m.startswith("_")]
    for method in inplace:
        c = Culprit(op=f"torch.Tensor.{method}", file="m.py", line=3, saved_code="h = x.exp()", saved_line=2)
        text = words(c, f"h.{method}(y)")
        for called in re.findall(r"`[^`]*?\.([a-z_]\w*)\(", text):
            assert called == method or hasattr(torch.Tensor, called), (method, called, text)
        for called in re.findall(r"`(torch\.\w+)", text):
            assert hasattr(torch, called.split(".")[1]), (method, called, text)


@pytest.mark.slow
def test_dry_run_runs_the_script_once_and_writes_nothing(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("with open('runs.txt', 'a') as f:\n    f.write('run\\n')\n" + ALIAS)
    before = script.read_bytes()
    done = blame_fix("--fix", "--dry-run", script.name, cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]  # the script's own status: the error escaped it
    assert "--fix runs train.py again, each time in a fresh Python" in done.stdout
    assert "try (expand) train.py:11" in done.stdout and "running the reference" not in done.stdout
    assert script.read_bytes() == before and (tmp_path / "runs.txt").read_text() == "run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.txt", "train.py"]


def test_explain_can_diagnose_without_a_fix(capsys):
    assert explain(cases.iadd, suggest=False) is not None
    out = capsys.readouterr().out
    assert "modified by  torch.Tensor.add_" in out and "saved by     torch.relu" in out
    assert "Suggested fix" not in out and "What to do" not in out and "\n+" not in out and "\n-" not in out
    explain(cases.iadd)
    assert "Suggested fix" in capsys.readouterr().out


def measured(report: dict, monkeypatch) -> tuple[int, int, object]:
    """(characters parsed, lines diffed) to make the grader's suggestion for a report, and the suggestion."""
    parsed, diffed = [0], [0]
    source_init, matcher_init = cst_edit.Source.__init__, difflib.SequenceMatcher.__init__

    def counting_source(self, text):
        parsed[0] += len(text)
        source_init(self, text)

    def counting_matcher(self, isjunk=None, a="", b="", autojunk=True):
        diffed[0] += len(a) + len(b)
        matcher_init(self, isjunk, a, b, autojunk)

    cst_edit.parsed.cache_clear()
    monkeypatch.setattr(cst_edit.Source, "__init__", counting_source)
    monkeypatch.setattr(difflib.SequenceMatcher, "__init__", counting_matcher)
    s = suggest_from_line(report)
    return parsed[0], diffed[0], s


def test_the_graders_suggestion_costs_the_same_whatever_the_report_says(monkeypatch):
    """A student decides the line numbers, the code and the sites of the report: what is parsed and diffed is
    the culprit's and the saver's lines (at most 400 characters each), never more."""
    normal = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 3, "code": "y += 1"},
              "saved_by": {"op": "torch.relu", "file": "<answer>", "line": 2, "code": "y = x.relu()"}}
    parsed, diffed, s = measured(normal, monkeypatch)
    assert (s.line, s.before, s.after) == (3, "y += 1", "y = y + 1")
    sites = [{"op": "torch.Tensor.add_", "file": "<answer>", "line": 10**6, "code": "y += 1"}] * 100_000
    for hostile in (
        {**normal, "culprit": {**normal["culprit"], "line": 10**6, "chain": sites},
         "saved_by": {**normal["saved_by"], "line": 10**6 - 1, "chain": sites}, "modifications": sites},
        {**normal, "culprit": {**normal["culprit"], "line": 10**8 + 7}},
        {**normal, "culprit": {**normal["culprit"], "code": "y += " + "1 + " * 99 + "1"}},
        {**normal, "culprit": {**normal["culprit"], "code": "y += " + "1" * 10**6}},
        {**normal, "saved_by": {**normal["saved_by"], "code": "(" * 10**5}},
    ):
        p, d, s = measured(hostile, monkeypatch)
        assert p <= 2 * 400 + 2 and d <= 2 * 3 * (400 + 8), (p, d)
        assert s is not None
    p, d, s = measured({**normal, "culprit": {**normal["culprit"], "line": 10**6}, "saved_by": {
        **normal["saved_by"], "line": 10**6 - 1}}, monkeypatch)
    assert (p, d) == (parsed, diffed) and s.line == 10**6  # the answer's own numbers, for the same work
    assert s.diff.splitlines()[2] == f"@@ -{10**6},1 +{10**6},1 @@"

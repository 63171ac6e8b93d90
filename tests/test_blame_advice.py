"""Issue 34: never advise a wrong fix. Programs of each shape written for these tests (tests/blame_cases/advice/)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.blame.fix.fix import Repair
from autograder.blame.fix.verify import Verification
from autograder.blame.suggest.advice import applied, checked_advice
from autograder.blame.suggest.suggest import Suggestion, suggestions

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "blame_cases" / "advice"


def report_of(name: str, culprit: tuple[int, str, bool], saved: tuple[int, str, str], chain=()) -> dict:
    text = (CASES / name).read_text()
    code = text.splitlines()
    line, op, grad_mode = culprit
    sline, sop, saved_as = saved
    return {"culprit": {"op": op, "file": name, "line": line, "code": code[line - 1].strip(), "grad_mode": grad_mode,
                        "chain": [{"file": name, "line": n} for n in (line, *chain)]},
            "saved_by": {"op": sop, "file": name, "line": sline, "code": code[sline - 1].strip(),
                         "saved_as": saved_as, "line_ran_again": False},
            "modifications": [{"op": op, "file": name, "line": line}]}


def read(name: str) -> str | None:
    path = CASES / name
    return path.read_text() if path.exists() else None


def test_a_write_under_no_grad_into_a_buffer_stays_and_the_saving_line_gets_the_copy():
    """§1: power iteration in spectral norm: `self.u.copy_(...)` under no_grad is the program's intent."""
    report = report_of("power_iteration.py", (15, "torch.Tensor.copy_", False), (16, "torch.dot", "input"))
    rewrites, words = suggestions(report, read)
    assert rewrites and rewrites[0].kind == "clone_saved"
    assert "torch.dot(self.u.clone(), self.w @ v)" in rewrites[0].after
    assert all("no_grad" not in (r.after or "") for r in rewrites)  # the write stays under no_grad
    assert "Take it out" not in words.why and "keep it as it is" in words.why
    assert words.advises == ("clone_saved",)


def test_an_optimizer_step_inside_a_helper_is_restricted_from_its_callers_line():
    """§2: the critic's step inside `update_critic(...)`, before the policy loss's backward."""
    report = report_of("helper_step.py", (14, "torch.Tensor.add_", False), (19, "torch.nn.functional.linear", "input"),
                       chain=(21,))
    rewrites, words = suggestions(report, read)
    kinds = [r.kind for r in rewrites]
    assert kinds == ["restrict_backward", "move_step"], kinds
    assert "policy_loss.backward(inputs=list(actor.parameters()))" in rewrites[0].after
    assert "detach" not in words.why and "policy_loss.backward()" in words.why


def test_a_loop_write_into_the_tensor_whose_slice_it_saved_copies_the_slice_it_reads():
    """§3: `T[b][t] = conv(T[b][t])`: a copy of `T` before the statement would be read, saved and written by it."""
    report = report_of("loop_slices.py", (9, "torch.Tensor.__setitem__", True),
                       (9, "torch.nn.functional.conv1d", "input"))
    rewrites, _ = suggestions(report, read)
    assert rewrites[0].kind == "clone_saved"
    assert rewrites[0].after.strip() == "T[b][t] = conv(T[b][t].clone().unsqueeze(0)).squeeze(0)"
    assert not any(r.kind == "clone_first" for r in rewrites)


def test_words_whose_rewrites_all_failed_are_withdrawn_and_others_say_they_are_unverified():
    """The principle: advice the tool's own attempts showed does not work is never printed."""
    words = Suggestion("write into a copy (`x = x.clone()` first)", "f.py", 3, "x[0] = 1", advises=("clone_first",))
    tried = Suggestion("", "f.py", 3, "x[0] = 1", "x = x.clone()\nx[0] = 1", kind="clone_first")
    failed = Repair(words=words, tried=[(tried, Verification(False, False, "the in-place error remains"))])
    assert failed.withdrawn() == "clone_first"
    assert "write into a copy" not in failed.text() and "No advice" in failed.text()
    assert "write into a copy" not in json.dumps(failed.to_json())
    untried = Repair(words=words)
    assert untried.withdrawn() is None
    assert "not verified" in untried.text() and "write into a copy" in untried.text()


def _fix(name: str, tmp_path: Path) -> dict:
    copy = tmp_path / name
    shutil.copy(CASES / name, copy)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "autograder.blame.fix.script", "--fix", "--json", name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["fix"]


def test_the_smallest_verified_repair_is_kept_and_each_ones_cost_reported(tmp_path):
    """§4: a gate module called six times: `y = y.clone()` copies at every call; `out = out * 2` copies nothing."""
    fix = _fix("shared_gate.py", tmp_path)
    assert fix["kind"] == "expand" and fix["verified"] is True
    costs = {c["kind"]: c["values_copied_per_forward"] for c in fix["costs"]}
    assert costs == {"clone_saved": 6 * 4 * 8, "expand": 0}


def test_feedback_advice_is_proposed_only_when_the_grade_passes():
    """§5: `checked_advice` grades the answer with the rewrite applied; a rewrite that fails is not proposed."""
    code = "def f(x):\n    h = x.exp()\n    h += 1\n    return h\n"
    report = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 3, "code": "h += 1"},
              "saved_by": {"op": "torch.exp", "file": "<answer>", "line": 2, "code": "h = x.exp()",
                           "saved_as": "output"}}
    graded: list[str] = []

    class Graded:
        def __init__(self, ok: bool) -> None:
            self.score, self.max_score, self.tests = (1.0 if ok else 0.5), 1.0, []

    def passing(fixed: str):
        graded.append(fixed)
        return Graded(True)

    checked = checked_advice(code, report, passing)
    assert checked is not None and checked.verified is True
    assert graded == [applied(code, checked.suggestion)] and "h = h + 1" in graded[0]
    assert checked_advice(code, report, lambda fixed: Graded(False)) is None

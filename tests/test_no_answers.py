"""A class graded without fixes (issue 35 §4) gets its diagnosis and no answer.

By default (self-study) feedback proposes a fix to try: after the starter's `raise` is deleted, `check()` says
`out += x` -> `out = out + x`, and for rnn_hidden the whole line that passes. With the switch (`autograder grade
--no-fixes`, `autograder export ... --no-fixes`, `autograder release --no-fixes`) it says what broke, where and
why, and proposes nothing. Here every exercise's starter with its raise removed, its report's code and its
catalogue of known wrong answers (references/<id>.py) are graded as a class that way, and no line of any
solution's answers (each logical line, without whitespace, as tests/test_release.py reads them, the lines the
course teaches as a rule included) appears in any field a student reads, unless the submission holds it itself
(feedback quotes the student's own lines). The same starters graded by default do show answer lines: the
comparison can fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from autograder import cli
from autograder.batch import Preparations, Settings, grade_batch
from autograder.bundle.config import BundleConfig
from autograder.core.result import teacher_only_keys
from autograder.exercises import EXERCISES
from autograder.feedback.wording import TEMPLATES
from autograder.intake.cells import marker_line
from autograder.intake.submission import is_answer_cell
from autograder.notebook.selfcheck import self_check
from autograder.pipeline import explainer, judge, regrader
from autograder.reference_store import known_submissions
from autograder.release import FIXES_SWITCH
from autograder.runner import InProcessRunner
from tests.conftest import EXERCISE_NOTEBOOKS, ROOT, SOLUTIONS
from tests.test_release import MIN_CHARS, REGION, URL, code_lines

_BLANK = re.compile(r"\s+")
_RAISE = re.compile(r"^\s*raise NotImplementedError\(.*\)\s*$", re.M)
NOT_SHOWN = set(teacher_only_keys())


def solution_lines() -> dict[str, str]:
    """{answer line without whitespace: where}: every logical line of the solutions' answer cells and HIDDEN
    regions that the starter notebooks do not show, of MIN_CHARS or more, imports aside."""
    given: set[str] = set()
    for path in sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                given |= {line for line, _ in code_lines(cell.source)}
    found: dict[str, str] = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type != "code":
                continue
            sources = [cell.source] if is_answer_cell(cell) else []
            sources += [region["body"] for region in REGION.finditer(cell.source) if region[1] == "HIDDEN"]
            for source in sources:
                for line, raw in code_lines(source):
                    if len(line) >= MIN_CHARS and line not in given and not raw.startswith(("import ", "from ")):
                        found.setdefault(line, f"{path.name} cell {i}: {raw}")
    return found


def starter_without_raise(exercise_id: str) -> nbformat.NotebookNode:
    """The exercise notebook, its answer cells' TODO `raise` lines deleted (what a student tries first)."""
    (path,) = EXERCISE_NOTEBOOKS.glob(f"*_{exercise_id}.ipynb")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if is_answer_cell(cell):
            cell.source = _RAISE.sub("", cell.source)
    return nb


def write_class(folder: Path, exercises: list[str], catalogue: bool) -> dict[str, str]:
    """The class's files; returns {file name: the code it holds}."""
    folder.mkdir()
    codes: dict[str, str] = {}
    for exercise_id in exercises:
        nb = starter_without_raise(exercise_id)
        name = f"{exercise_id}-starter.ipynb"
        nbformat.write(nb, folder / name)
        codes[name] = "\n".join(c.source for c in nb.cells if is_answer_cell(c))
        if not catalogue:
            continue
        known = known_submissions(exercise_id)
        entries = {"broken": known.broken, **{f"wrong-{k}": code for k, (code, _) in known.wrong.items()}}
        for i, (label, code) in enumerate(entries.items()):
            name = f"{exercise_id}-{i:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', label)[:40]}.py"
            (folder / name).write_text(code)
            codes[name] = code
    return codes


def strings(value: object) -> list[str]:
    """Every text in a JSON value, whatever its depth (so a field added later is read too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def leaks(results: list, codes: dict[str, str], lines: dict[str, str]) -> dict[str, list[str]]:
    """{submission: the answer lines its student-visible fields hold and its own code does not}."""
    found = {}
    for result in results:
        shown = {k: v for k, v in result.to_json().items() if k not in NOT_SHOWN}
        text = _BLANK.sub("", "\n".join(strings(shown)))
        own = _BLANK.sub("", codes[result.submission])
        given = [where for line, where in lines.items() if line in text and line not in own]
        if given:
            found[result.submission] = given
    return found


FIX_WORDS = tuple(TEMPLATES[name].split("{")[0] for name in ("fix", "fix in words"))
"""How every proposed fix starts ("A fix to try (line ", "How to fix it: "), whatever its wording."""
_PROPOSED = re.compile(r"-> `(?P<after>[^`]+)`")


class Recording(InProcessRunner):
    """The in-process runner, keeping every job and its report, so that each can be judged again."""

    def __init__(self):
        self.reports = []

    def run(self, job):
        report = super().run(job)
        self.reports.append((job, report))
        return report


@pytest.fixture(scope="module")
def graded_both_ways(tmp_path_factory):
    """The class (every exercise: the starter without its raise, the report's code, every known wrong answer),
    graded without fixes (grade_batch, Settings.fixes False), and each run judged again by default (the switch
    changes words only, so the run is not repeated): {fixes: (results, codes)}."""
    folder = tmp_path_factory.mktemp("class")
    codes = write_class(folder / "class", sorted(EXERCISES), catalogue=True)
    settings, runner = Settings(timeout=60, fixes=False), Recording()
    preparations = Preparations(settings)
    results = grade_batch([folder / "class"], tmp_path_factory.mktemp("out"), settings, runner,
                          preparations=preparations)
    assert {r.submission for r in results} == set(codes) and len(runner.reports) == len(codes)
    default, judged = [], set()
    for job, report in runner.reports:
        # a .py file is graded as it is; the one notebook of each exercise, as its answer cells make one program
        name = next((n for n in codes if n.startswith(f"{job.exercise}-") and n.endswith(".py")
                     and codes[n] == job.code and n not in judged), f"{job.exercise}-starter.ipynb")
        judged.add(name)
        codes[name] = job.code
        exercise = EXERCISES[job.exercise]
        prepared = replace(preparations.get(exercise), explainer=explainer(exercise, True))
        default.append(judge(exercise, prepared, report, submission=name, answer=job.code,
                             regrade=regrader(exercise, prepared, InProcessRunner(), 60.0)))
    assert {r.submission for r in default} == set(codes)
    return {False: (results, codes), True: (default, codes)}


def said(results) -> str:
    return "\n".join(s for r in results for s in strings({k: v for k, v in r.to_json().items()
                                                          if k not in NOT_SHOWN}))


def test_the_default_gives_answers_away(graded_both_ways):
    """Self-study, as the course is by default: fixes are proposed, some of them a line of a solution (residual_add's
    `out = out + x`), and rnn_hidden's report gets the whole line that makes it pass."""
    results, codes = graded_both_ways[True]
    found = leaks(results, codes, solution_lines())
    assert [name for name in found if name.startswith("residual_add-")], found
    text = said(results)
    assert all(words in text for words in FIX_WORDS)
    rnn = said([r for r in results if r.submission.startswith("rnn_hidden-00-broken")])
    assert "h_cur = h_cur.detach()" in rnn


def test_a_class_graded_without_fixes_gets_no_answer(graded_both_ways):
    """No line of a solution, no fix of any kind, and none of the rewrites the default proposed for the same
    submissions; the diagnosis stays: what broke, at which line, why."""
    lines = solution_lines()
    assert len({where.split(" cell ")[0] for where in lines.values()}) >= len(EXERCISES) - 1
    results, codes = graded_both_ways[False]
    assert not leaks(results, codes, lines)
    text = said(results)
    assert not [words for words in FIX_WORDS if words in text]
    default, _ = graded_both_ways[True]
    proposed = {r.submission: {m["after"] for t in r.tests for m in _PROPOSED.finditer(t.output)} for r in default}
    assert sum(map(len, proposed.values())) >= 3
    for r in results:
        shown = _BLANK.sub("", said([r]))
        own = _BLANK.sub("", codes[r.submission])
        given = [a for a in proposed[r.submission] if _BLANK.sub("", a) in shown and _BLANK.sub("", a) not in own]
        assert not given, (r.submission, given)
    assert "The line that broke autograd:" in text and "What it means:" in text
    assert re.search(r" at line \d+ of your answer", text)
    # the same scores: the switch changes words, never a grade
    assert sorted((r.submission, r.score, r.status) for r in results) == sorted(
        (r.submission, r.score, r.status) for r in default)


def test_the_leaf_error_keeps_its_meaning_and_drops_its_example(tmp_path):
    from autograder.core.outcome import ErrorInfo
    from autograder.feedback.describe import Explainer

    error = ErrorInfo("RuntimeError", "a leaf Variable that requires grad is being used in an in-place operation.")
    with_fix, without = Explainer(fixes=True).describe(error), Explainer(fixes=False).describe(error)
    assert "y = x + out" in with_fix and "with torch.no_grad()" in with_fix
    assert "y = x + out" not in without and "no_grad" not in without and "What it means:" in without


def test_the_package_switch_turns_the_self_check_s_fixes_off(monkeypatch, capsys):
    """check() on residual_add's report in the answer cell: `out += x` -> `out = out + x` by default; the line
    and why, and no fix, once the package says SHOW_FIXES = False (what `autograder release --no-fixes` writes)."""
    from autograder.feedback import describe
    from autograder.notebook.selfcheck import Checker

    history = [f"{marker_line(1, 1)}\n{known_submissions('residual_add').broken}"]
    lines = solution_lines()

    def said() -> str:
        Checker()("residual_add", history=history, namespace={})
        return capsys.readouterr().out

    text = said()
    assert "out=out+x" in [line for line in lines if line in _BLANK.sub("", text)]
    assert FIX_WORDS[0] in text
    monkeypatch.setattr(describe, "SHOW_FIXES", False)
    text = said()
    assert not [line for line in lines if line in _BLANK.sub("", text)]
    assert not [words for words in FIX_WORDS if words in text]
    assert "The line that broke autograd:" in text and "What it means:" in text
    found = self_check("residual_add", history=history, namespace={}).result
    assert found is not None and found.score < found.max_score


def test_the_switch_reaches_the_bundles(tmp_path):
    """`autograder export gradescope --no-fixes` writes `fixes: false` into the bundle's configuration, which
    grades with Settings.fixes False; without the switch (and in an older configuration) fixes are shown."""
    import zipfile

    env = {**os.environ, "AUTOGRADER_SALT": "a term's secret"}
    for flag, fixes in (["--no-fixes"], False), ([], True):
        out = tmp_path / f"gs{len(flag)}"
        done = subprocess.run([sys.executable, "-m", "autograder.cli", "export", "gradescope", "--out", str(out),
                               "--exercise", "residual_add", *flag], capture_output=True, text=True, env=env,
                              timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        with zipfile.ZipFile(out / "autograder.zip") as z:
            name = next(n for n in z.namelist() if n.endswith("autograder_config.json"))
            data = json.loads(z.read(name))
        assert data["fixes"] is fixes
        (tmp_path / "c.json").write_text(json.dumps(data))
        assert BundleConfig.load(tmp_path / "c.json").settings("residual_add").fixes is fixes
    del data["fixes"]
    (tmp_path / "c.json").write_text(json.dumps(data))
    assert BundleConfig.load(tmp_path / "c.json").settings("residual_add").fixes is True


@pytest.mark.slow
def test_the_edition_released_without_fixes_checks_without_them(tmp_path):
    """The edition's package says SHOW_FIXES = False, and its `autograder check` on residual_add's report names
    the line and proposes nothing; the default edition keeps its fixes."""
    out = tmp_path / "edition"
    assert cli.main(["release", str(out), "--repository", URL, "--no-fixes"]) == 0
    assert "SHOW_FIXES = False" in (out / FIXES_SWITCH).read_text()
    (tmp_path / "residual_add_mine.py").write_text(known_submissions("residual_add").broken)
    env = {**os.environ, "PYTHONPATH": str(out), "AUTOGRADER_REFERENCES": str(tmp_path / "none")}
    done = subprocess.run([sys.executable, "-c", "import autograder.cli as c, sys; sys.exit(c.main(sys.argv[1:]))",
                           "check", str(tmp_path / "residual_add_mine.py")], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert "The line that broke autograd:" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    printed = _BLANK.sub("", done.stdout)
    assert not [where for line, where in solution_lines().items() if line in printed]
    assert not [words for words in FIX_WORDS if words in done.stdout]
    plain = tmp_path / "plain"
    assert cli.main(["release", str(plain), "--repository", URL]) == 0
    assert "SHOW_FIXES = True" in (plain / FIXES_SWITCH).read_text()


@pytest.mark.slow
def test_autograder_grade_takes_the_switch(tmp_path):
    """`autograder grade --no-fixes`: residual_add's report gets its line and no fix; without it, the fix."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "residual_add_ada.py").write_text(known_submissions("residual_add").broken)
    texts = {}
    for flag in ([], ["--no-fixes"]):
        out = tmp_path / f"out{len(flag)}"
        assert cli.main(["grade", str(tmp_path / "class"), "--out", str(out), "--jobs", "1", "--device", "cpu",
                         "--no-sandbox", "--quiet", *flag]) == 0
        (path,) = out.rglob("results.json")
        texts[bool(flag)] = json.dumps(json.loads(path.read_text()), ensure_ascii=False)
    assert FIX_WORDS[0] in texts[False] and "out = out + x" in texts[False]
    assert not [words for words in FIX_WORDS if words in texts[True]] and "out = out + x" not in texts[True]
    assert "The line that broke autograd:" in texts[True]

"""Facts are fields: reword every sentence the grader writes and every reader still finds the same facts.

The grader's sentences are named templates (autograder/feedback/wording.py). The `reworded` fixture replaces each with a
different sentence holding the same fields (other words, another order), then a small class is graded with the
real batch grader, and everything a reader of the results gets is compared with a run in the grader's own words:
results.json's facts (statuses, scores, each check's trial and cause, each cause's error, lines, op, tampering),
the class report (culprit lines marked, flags, who needs attention, the spreadsheet gradebook), the platforms'
results files (Gradescope, PrairieLearn) and the workshop's report of a check. Nothing may read the prose back.
"""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest

from autograder.batch import Preparations, Settings, grade_batch
from autograder.bundle.config import BundleConfig
from autograder.core.outcome import ErrorInfo, RunReport
from autograder.core.result import Result
from autograder.core.status import Status
from autograder.exercises import get
from autograder.feedback import wording
from autograder.pipeline import judge, prepare
from autograder.platforms import gradescope, prairielearn
from autograder.reference_store import known_submissions
from autograder.reports.html import write_report
from autograder.runner import InProcessRunner
from autograder.workshop import client
from tests.conftest import solution_code

SUBMISSIONS = {  # file name -> (exercise, code)
    "ada_residual_add.py": ("residual_add", lambda: solution_code("residual_add")),
    "bob_residual_add.py": ("residual_add", lambda: known_submissions("residual_add").broken),
    "cleo_residual_add.py": ("residual_add", lambda: known_submissions("residual_add").wrong["no_grad around +="][0]),
    "dan_residual_add.py": ("residual_add", lambda: known_submissions("residual_add").wrong[".data add"][0]),
    "eve_leaf_sgd.py": ("leaf_sgd", lambda: known_submissions("leaf_sgd").broken),
    "frank_data_trap.py": ("data_trap", lambda: "def normalized_linear(x, weight:\n    return x\n"),
    "gil_data_trap.py": ("data_trap", lambda: known_submissions("data_trap").broken),
}
"""A solution, the reports' bugs, wrong fixes and a syntax error."""

CAUGHT = {  # what the sandboxed worker reports for code that tampered with the grader, or forged its report
    "mallory_data_trap.py": RunReport(load_error=ErrorInfo("TamperError", "your code replaced parts of the grader "
                                                                          "or of torch (torch.Tensor.backward)")),
    "trudy_data_trap.py": RunReport(Status.CRASHED, "the report did not come from the grader's harness", forged=True),
}


def reworded_templates() -> dict[str, str]:
    """Each template as another sentence: a marker, then its fields in reverse order, with their formats."""
    found = {}
    for name, text in wording.TEMPLATES.items():
        fields = [(field, spec) for _, field, spec, _ in string.Formatter().parse(text) if field]
        shown = " ~ ".join("{" + field + (":" + spec if spec else "") + "}" for field, spec in reversed(fields))
        found[name] = f"«{name.upper()}» {shown}".rstrip()
    return found


@pytest.fixture
def reworded(monkeypatch):
    monkeypatch.setattr(wording, "TEMPLATES", reworded_templates())


def graded_class(folder: Path) -> tuple[list[Result], Path]:
    """The class graded by the real batch grader (in process) into folder/grades, and its report."""
    files = folder / "class"
    files.mkdir(parents=True)
    for name, (_, code) in SUBMISSIONS.items():
        (files / name).write_text(code())
    settings = Settings(timeout=60)
    preparations = Preparations(settings)
    data = [r.to_json() for r in grade_batch([files], folder / "grades", settings, InProcessRunner(),
                                             preparations=preparations)]
    exercise = get("data_trap")
    for name, report in CAUGHT.items():  # the sandbox's verdicts, judged and written as the batch writes them
        caught = judge(exercise, preparations.get(exercise), report, submission=name).to_json()
        data.append(caught)
        (folder / "grades" / name).mkdir()
        (folder / "grades" / name / "results.json").write_text(json.dumps(caught))
    write_report(folder / "grades", folder / "report")
    return [Result.from_json(d) for d in data], folder / "report"


def result_facts(results: list[Result]) -> list:
    return [(r.submission, r.exercise, r.status, r.score, r.tampered,
             [(t.name, t.status, t.score, t.trial, t.cause) for t in r.tests],
             [(c.error, c.lines, c.op, c.tampered) for c in r.causes]) for r in results]


def page_facts(report: Path) -> dict:
    """What the pages mark, not what they say: culprit lines, flags, who is in each needs-attention group."""
    facts = {}
    for page in sorted(report.rglob("*.html")):
        text = page.read_text()
        facts[str(page.relative_to(report))] = (sorted(re.findall(r'id="[^"]*L(\d+)" class="culprit"', text)),
                                                text.count('<p class="flag">'), text.count('<div class="same">'))
    overview = (report / "index.html").read_text()
    attention = overview[overview.index('id="attention"'):overview.index('id="missing"')]
    facts["attention"] = re.findall(r'<a href="students/[^"]+">([^<]+)</a>', attention)
    facts["gradebook"] = (report / "gradebook_lms.csv").read_text()
    return facts


def platform_facts(results: list[Result]) -> list:
    config = BundleConfig(tuple(dict.fromkeys(r.exercise for r in results)))
    facts = []
    for r in results:
        gs = gradescope.to_gradescope([r], BundleConfig((r.exercise,)))
        pl = prairielearn.to_prairielearn(r)
        facts.append((gs["score"], [(t["name"], t["score"], t["status"], t["visibility"]) for t in gs["tests"]],
                      pl.get("gradable"), pl.get("score"), [(t["name"], t["points"]) for t in pl.get("tests", [])]))
    assert config.exercises  # one bundle may hold several exercises: each is converted on its own above
    return facts


def workshop_facts() -> list:
    """The workshop's report of a self-check of each submission (client.payload, what check() sends)."""
    sent = []
    for exercise_id, code in SUBMISSIONS.values():
        exercise = get(exercise_id)
        prepared = prepare(exercise, public_only=True)
        from autograder.pipeline import run

        report = run(exercise, code(), prepared, InProcessRunner())
        sent.append(client.payload(judge(exercise, prepared, report, answer=code()), report, None))
    return sent


@pytest.fixture(scope="module")
def as_written(tmp_path_factory):
    """The class in the grader's own words."""
    results, report = graded_class(tmp_path_factory.mktemp("written"))
    return results, report, workshop_facts()


@pytest.mark.slow
def test_reworded_sentences_leave_every_fact_in_place(as_written, reworded, tmp_path):
    written, written_report, written_sent = as_written
    results, report = graded_class(tmp_path)

    # the words did change, everywhere a reader looks
    assert all("«" in r.output for r in results)
    assert any("«RAISED»" in c.text for r in results for c in r.causes)
    assert {r.output for r in results}.isdisjoint({r.output for r in written})

    # and every fact stayed
    assert result_facts(results) == result_facts(written)
    assert any(c.lines for r in written for c in r.causes)  # the comparison compares something
    assert [r.submission for r in written if r.tampered] == list(CAUGHT)
    assert page_facts(report) == page_facts(written_report)
    assert any(culprits for culprits, _, _ in list(page_facts(written_report).values())[:-2])
    assert platform_facts(results) == platform_facts(written)
    assert workshop_facts() == written_sent
    assert any(sent["error"] and sent["op"] for sent in written_sent)


def test_every_template_is_reworded_and_fills():
    """The fixture rewords them all, and each reworded template still fills from its own fields."""
    original, reworded = wording.TEMPLATES, reworded_templates()
    assert reworded.keys() == original.keys() and all(reworded[k] != original[k] for k in original)
    for name, text in original.items():
        fields = {f: 1 for _, f, _, _ in string.Formatter().parse(text) if f}
        assert reworded[name].format(**fields)


def searched_strings(source: str) -> list[str]:
    """The strings a module searches text for: the patterns it gives `re`, the literals it tests with `in`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(first.value)
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and \
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            found.append(node.left.value)
    return found


def test_no_reader_of_results_searches_the_graders_words():
    """The pages, the LMS files, the platforms and the workshop search no text for the grader's sentences: the
    facts they show are fields. Every pattern they give `re` and every literal they look for with `in` is held
    against each template's fixed words (two words or more), and against the words that used to mark
    tampering and forged reports."""
    root = Path(__file__).resolve().parent.parent / "autograder"
    readers = [*root.glob("reports/*.py"), *root.glob("platforms/*.py"), *root.glob("workshop/*.py"),
               root / "feedback" / "text.py", root / "batch.py"]
    searched = [text for path in readers for text in searched_strings(path.read_text())]
    assert searched  # the readers do search some text (file names, CSV headers): the check looks at something
    words = [part.strip(" .:()`\n~") for text in wording.TEMPLATES.values() for part in re.split(r"\{[^}]*\}", text)]
    words = [w for w in words if len(w.split()) >= 2] + ["TamperError", "replaced parts of", "did not come from"]
    for text in searched:
        assert not [w for w in words if w in text or text in w and len(text.split()) >= 2], text


def test_what_feedback_says_is_decided_by_the_explainer_passed_not_by_what_was_imported():
    """The words of a grading depend on the Explainer it is given, a value: with and without rewrites, side by
    side, with no global set or cleared; and importing pipeline (the locator's suggestion) changes nothing."""
    code = ("import sys\n"
            "from autograder.exercises import get\n"
            "from autograder.feedback.describe import Explainer\n"
            "from autograder.core.grade import grade\n"
            "from autograder.harness import run_answer\n"
            "from autograder.public import load_public\n"
            "from autograder.reference_store import known_submissions\n"
            "exercise = get('residual_add')\n"
            "trials, inputs, shipped = load_public(exercise)\n"
            "report = run_answer(exercise, known_submissions('residual_add').broken, trials, inputs)\n"
            "def said(explainer=None):\n"
            "    result = grade(exercise, report, shipped, trials, inputs, public_only=True, explainer=explainer)\n"
            "    return [t.output for t in result.tests] + [c.text for c in result.causes]\n"
            "before = said()\n"
            "assert 'autograder.pipeline' not in sys.modules\n"
            "from autograder.pipeline import suggested_rewrite\n"
            "assert said() == before, 'importing pipeline changed what feedback says'\n"
            "with_fix = said(Explainer(True, suggested_rewrite))\n"
            "without = said(Explainer(False, suggested_rewrite))\n"
            "assert without == before and any('A fix to try' in t for t in with_fix), with_fix\n"
            "assert not any('A fix to try' in t for t in before + without)\n"
            "assert said(Explainer(True, suggested_rewrite)) == with_fix and said() == before\n")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parent.parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_grader_with_and_without_rewrites_side_by_side():
    """pipeline.judge's explainer follows the exercise; one built by hand follows itself. No global involved."""
    from autograder.core.grade import grade
    from autograder.feedback.describe import Explainer
    from autograder.pipeline import explainer, regrader, run, suggested_rewrite

    exercise = get("residual_add")
    prepared = prepare(exercise, public_only=True)
    report = run(exercise, known_submissions("residual_add").broken, prepared, InProcessRunner())
    texts = {}
    for rewrites in (True, False, True):
        result = grade(exercise, report, prepared.reference, prepared.trials, prepared.inputs, public_only=True,
                       explainer=Explainer(rewrites, suggested_rewrite))
        texts.setdefault(rewrites, []).append([c.text for c in result.causes])
    assert texts[True][0] == texts[True][1] != texts[False][0]
    assert any("A fix to try" in t for t in texts[True][0]) and not any("A fix to try" in t for t in texts[False][0])
    assert explainer(exercise) == Explainer(exercise.rewrites, suggested_rewrite)
    verified = regrader(exercise, prepared, InProcessRunner(), 60.0)  # the rewrite is graded before it is shown
    assert judge(exercise, prepared, report, answer=known_submissions("residual_add").broken,
                 regrade=verified).causes == grade(
        exercise, report, prepared.reference, prepared.trials, prepared.inputs, public_only=True,
        explainer=Explainer(exercise.rewrites, suggested_rewrite)).causes

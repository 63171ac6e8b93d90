"""The book: every chapter runs, every cell meant to fail raises the error it promises, claims stand on
assertions, and the built site works in a real browser.

A cell meant to fail is tagged `raises-exception` (which only *allows* an error) and declares the error
it promises in its metadata, in MyST:

    ```{code-cell} ipython3
    :tags: [raises-exception]
    :expect: {raises: RuntimeError, match: "modified by an inplace operation"}
    ```

`match` is a regular expression searched in the message. The build runs every page alone in a fresh
temporary folder (book/_config.yml, `run_in_temp`): a page needs only the installed course, as a learner's
downloaded copy does. The promises are checked on each build's run of each page, from its execution cache
(the Chinese build runs the same code in a Chinese kernel, into a cache of its own). `scripts/check-release
pages` runs chosen pages again on another torch release without building the book (the `alone` tests, which
the suite leaves out: the build ran the same notebooks).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag

import jupytext
import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup
from myst_nb.core.read import read_myst_markdown_notebook
from nbclient import NotebookClient
from traitlets.config import Config

from autograder.assign import setup_cell
from autograder.exercises import get
from tests.browser import CHROMIUM, open_browser, serve, visit
from tests.conftest import EXERCISE_NOTEBOOKS, ROOT

BOOK = ROOT / "book"
CHAPTER_DIR = BOOK / "chapters"
CHAPTERS = sorted(CHAPTER_DIR.glob("[0-9][0-9]_*.md"))
EXECUTED = sorted(p for p in BOOK.rglob("*.md") if "_build" not in p.parts and "kernelspec:" in p.read_text()[:400])
"""Every page the book runs when it is built, each offered as a notebook by the download button."""
HTML = BOOK / "_build" / "html"
SCREENSHOTS = BOOK / "_build" / "screenshots"
PROMISE = "expect"
# Pages whose every section must prove its claims with `assert` (issue 4): every chapter but the teachers'.
ASSERTED = ("01_", "02_", "03_", "04_", "05_", "06_", "07_", "08_", "09_", "10_", "card", "fixes")


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _where(index: int, cell) -> str:
    first = next((line for line in cell.source.splitlines() if line.strip() and not line.startswith("%")), "")
    return f"cell {index} ({first.strip()[:60]!r})"


def promise_problems(nb) -> list[str]:
    """Every way an executed notebook breaks the raises-exception contract, in words."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        where = _where(index, cell)
        tagged = "raises-exception" in tags(cell)
        promise = cell.metadata.get(PROMISE)
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if not tagged:
            if promise is not None:
                problems.append(f"{where} promises {promise} but is not tagged raises-exception")
            if errors:
                problems.append(f"{where} raised {errors[0].ename} but is not tagged raises-exception")
            continue
        if not (isinstance(promise, dict) and isinstance(promise.get("raises"), str)
                and isinstance(promise.get("match"), str)):
            problems.append(f"{where} is tagged raises-exception but does not say which error it promises: "
                            f"add `:{PROMISE}: {{raises: ErrorType, match: \"regex\"}}` (found {promise!r})")
            continue
        promised = f"{promise['raises']} matching /{promise['match']}/"
        if not errors:
            problems.append(f"{where} raised nothing; it promises {promised}")
        elif errors[0].ename != promise["raises"] or not re.search(promise["match"], errors[0].evalue):
            problems.append(f"{where} raised {errors[0].ename}: {errors[0].evalue[:200]!r}; it promises {promised}")
    return problems


# CurveZMQ keys for the kernel, as the book's build gives them (book/_ext/course_links.py): no warning that
# the kernel talks over TCP without encryption.
ENCRYPTED = Config({"KernelManager": {"transport_encryption": "auto"}})


def execute(nb, cwd: Path):
    """Run like the book build: in `cwd`; an error stops the run unless its cell is tagged raises-exception."""
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False, config=ENCRYPTED,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def as_downloaded(path: Path) -> nbformat.NotebookNode:
    """The page as the book's download button gives it: myst-nb's reading of the MyST file, the notebook the
    build executes and offers (before its outputs)."""
    return read_myst_markdown_notebook(path.read_text(encoding="utf-8"))


def sections(nb) -> dict[str, list[str]]:
    """Code cell sources under each `##` heading (the title's section is 'introduction'). Cells hidden from
    the web page count: they run at every build (the answers to a chapter's questions are checked there)."""
    found, current = {"introduction": []}, "introduction"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    current = line[3:].strip()
                    found.setdefault(current, [])
        else:
            found[current].append(cell.source)
    return found


def has_assert(source: str) -> bool:
    """An `assert`; a question's answer checked with `check_answer` (which asserts it); or a fix run by
    `reveal(key, code, ...)` whose code asserts."""
    python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "check_answer":
                return True
            code = node.args[1] if node.func.id == "reveal" and len(node.args) > 1 else None
            if isinstance(code, ast.Constant) and isinstance(code.value, str) and has_assert(code.value):
                return True
    return False


def test_toc_lists_every_chapter_and_takes_every_exercise():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    entries = [entry for part in toc["parts"] for entry in part["chapters"]]
    chapters = [f"chapters/{p.stem}" for p in CHAPTERS]
    references = [f"reference/{p.stem}" for p in sorted((BOOK / "reference").glob("*.md"))]
    assert entries == ([{"file": f} for f in chapters + references] + [{"glob": "exercises/*"}]
                       + [{"file": "after/fixes"}])
    assert (BOOK / "exercises").resolve() == EXERCISE_NOTEBOOKS.resolve(), "book/exercises must link to exercises/"


@pytest.mark.parametrize("path", EXECUTED, ids=[p.stem for p in EXECUTED])
def test_page_is_a_myst_notebook_with_proved_claims(path):
    nb = jupytext.read(path)
    assert nb.metadata["jupytext"]["text_representation"]["format_name"] == "myst", "jupyter-book executes only these"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    if path.name.startswith(ASSERTED):
        unproved = [title for title, cells in sections(nb).items()
                    if title != "introduction" and not any(has_assert(source) for source in cells)]
        assert not unproved, f"sections of {path.name} without an assert: {unproved}"


@pytest.mark.parametrize("path", EXECUTED, ids=[p.stem for p in EXECUTED])
def test_page_asserts_no_release(path):
    """The course allows torch>=2.2 and is checked on 2.13: a page states a release's behaviour in words,
    it never makes its asserts depend on `torch.__version__` (the setup cell only says which torch the course
    was checked on, and is held to be assign's own by the test below)."""
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "code" or cell.source == setup_cell().source:
            continue
        python = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(python)):
            if isinstance(node, (ast.Assert, ast.If)):
                assert "__version__" not in ast.unparse(node.test), f"{path.name}: {ast.unparse(node.test)}"


@pytest.mark.parametrize("path", EXECUTED, ids=[p.stem for p in EXECUTED])
def test_page_installs_the_course_where_it_is_missing(path):
    """A downloaded page opened on Colab starts with the exercises' setup cell, hidden from the web page."""
    first = next(c for c in as_downloaded(path).cells if c.cell_type == "code")
    assert first.source == setup_cell().source, "the first code cell must be autograder.assign's setup cell"
    assert "remove-cell" in tags(first)


def test_the_chapters_were_listed_and_the_download_reader_reads_them():
    assert len(CHAPTERS) == 11 and set(CHAPTERS) < set(EXECUTED)
    nb = as_downloaded(CHAPTERS[0])
    cell = next(c for c in nb.cells if "raises-exception" in tags(c))
    assert cell.metadata[PROMISE]["raises"] == "RuntimeError"  # the reader keeps the cells' metadata


@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.parametrize("path", EXECUTED, ids=[p.stem for p in EXECUTED])
def test_page_runs_where_it_is_downloaded_and_keeps_its_promises(path, tmp_path):
    """The notebook the download button gives, alone in a fresh folder with the installed course: no file of
    the repository next to it (a chapter that imported a helper from book/ failed here). Left out of the
    suite (`-m "not alone"`): the build ran each page so (test_each_page_the_build_ran_kept_its_promises)."""
    notebook = tmp_path / f"{path.stem}.ipynb"
    nbformat.write(as_downloaded(path), notebook)
    nb = execute(nbformat.read(notebook, as_version=4), tmp_path)
    assert not promise_problems(nb)


CONTRACT_CASES = """\
```{code-cell} ipython3
:tags: [raises-exception]
:expect: {raises: ValueError, match: "^bad value 3$"}
raise ValueError("bad value 3")
```

```{code-cell} ipython3
:tags: [raises-exception]
:expect: {raises: ValueError, match: "bad"}
x = 1
```

```{code-cell} ipython3
:tags: [raises-exception]
:expect: {raises: ValueError, match: "bad"}
raise KeyError("bad")
```

```{code-cell} ipython3
:tags: [raises-exception]
:expect: {raises: ValueError, match: "bad"}
raise ValueError("good")
```

```{code-cell} ipython3
:tags: [raises-exception]
raise ValueError("bad")
```

```{code-cell} ipython3
:expect: {raises: ValueError, match: "bad"}
y = 2
```
"""


@pytest.mark.slow
def test_the_promise_check_catches_every_broken_promise(tmp_path):
    nb = execute(jupytext.reads(CONTRACT_CASES, fmt="md:myst"), tmp_path)
    problems = promise_problems(nb)
    assert [int(p.split()[1]) for p in problems] == [1, 2, 3, 4, 5], problems
    assert "raised nothing" in problems[0] and "KeyError" in problems[1] and "'good'" in problems[2]
    assert "does not say which error" in problems[3] and "not tagged" in problems[4]


def test_an_untagged_error_stops_the_run(tmp_path):
    nb = jupytext.reads("```{code-cell} ipython3\nraise ValueError('oops')\n```\n", fmt="md:myst")
    with pytest.raises(Exception, match="oops"):
        execute(nb, tmp_path)


# ----- the built site ---------------------------------------------------------------------------------

def jupyter_book() -> str:
    beside = Path(sys.executable).with_name("jupyter-book")
    found = str(beside) if beside.exists() else shutil.which("jupyter-book")
    if not found:
        pytest.fail("jupyter-book is not installed: pip install -e '.[book]'")
    return found


@pytest.fixture(scope="module")
def site() -> Path:
    """The book in both languages, built as CI and the README build it (scripts/build-book: the Chinese site at
    zh/): warnings are errors, unchanged chapters come from the execution cache, and every page is written again
    (`--all`) so no stale page is tested."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build-book"), "all", "--all", "-W",
                           "--keep-going"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    # The kernels run encrypted (book/_ext/course_links.py): ipykernel has nothing to warn about.
    assert "without encryption" not in done.stdout + done.stderr
    # Every page ran alone in a fresh folder (run_in_temp), as a downloaded copy runs, never beside book/'s files.
    assert "Executing notebook using local CWD" not in done.stdout + done.stderr
    return HTML


CACHES = {"en": BOOK / "_build" / ".jupyter_cache", "zh": BOOK / "_build" / "zh" / ".jupyter_cache"}
"""Each edition's runs (scripts/build-book's CACHE): the Chinese build runs the same code in a Chinese kernel."""


def ran(page: Path, language: str | None = None) -> nbformat.NotebookNode:
    """The notebook the build of `language`'s edition ran for `page` (a MyST page, as the download button gives it,
    or a notebook), with that run's outputs, from the edition's execution cache. A Chinese exercise notebook is
    the Chinese edition's."""
    from jupyter_cache import get_cache

    language = language or ("zh" if "zh" in page.relative_to(ROOT).parts else "en")
    nb = as_downloaded(page) if page.suffix == ".md" else nbformat.read(page, as_version=4)
    _, merged = get_cache(CACHES[language]).merge_match_into_notebook(nb)  # KeyError: never ran
    return merged


EDITIONS = [(path, language) for path in EXECUTED for language in ("en", "zh")]


@pytest.mark.parametrize("path, language", EDITIONS,
                         ids=[f"{lang}-{p.relative_to(BOOK).with_suffix('').as_posix()}" for p, lang in EDITIONS])
def test_each_page_the_build_ran_kept_its_promises(site, path, language):
    """Every cell tagged raises-exception raised the error it promises, and no other cell raised, in the run
    each edition's build made of the page (alone in a fresh folder; the Chinese one in a Chinese kernel)."""
    nb = ran(path, language)
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "the build ran nothing"
    assert not promise_problems(nb)


def shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    """Every run of `n` words of `text`, lowercased."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@functools.cache
def the_courses_english() -> frozenset[tuple[str, ...]]:
    """The course's English sentences, as runs of four words: every template of the package's catalogue, its
    placeholders, code spans, quoted values and the PyTorch messages it quotes taken out (the scan of
    tests/test_zh_notebooks.py)."""
    from autograder.feedback.wording import _merged
    from tests.test_zh_notebooks import english_runs

    found: set[tuple[str, ...]] = set()
    for template in _merged().values():
        for piece in re.split(r"\{[^{}]*\}|\n", template):
            for run in english_runs(piece):
                found |= shingles(run)
    return frozenset(found)


ENGLISH_YET = "parser().format_help()"
"""The command line's --help, which is English in both editions (README.md, "Not yet here")."""


def courses_english_in(nb) -> list[str]:
    """The output lines of an executed page that show a sentence of the course's English catalogue (four words of one
    in a row), but where the page's own code writes the same words."""
    own = shingles(re.sub(r"\\[nt]", " ", " ".join(c.source for c in nb.cells if c.cell_type == "code")))
    courses = the_courses_english() - own
    english = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or ENGLISH_YET in cell.source:
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})  # a table shown as Markdown is read as its Markdown
            text = {"stream": output.get("text", ""), "error": output.get("evalue", "")}.get(
                output.output_type, data.get("text/markdown", data.get("text/plain", "")))
            english += [f"cell {index}: {line.strip()[:200]!r}" for line in text.splitlines()
                        if shingles(line) & courses]
    return english


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.relative_to(BOOK).with_suffix("").as_posix())
def test_a_chinese_page_shows_none_of_the_courses_english(site, path):
    """The Chinese build's run of a page: no output shows a sentence of the course's English. What the page's own
    code prints stays as it is written, in English, in both editions (the code is one source), and so do PyTorch's
    messages."""
    nb = ran(path, "zh")
    blank = [o.get("text", "")[:200] for c in nb.cells for o in c.get("outputs", [])
             if "missing from font" in o.get("text", "")]
    assert not blank, f"{path.name}: a figure's font has no glyph for its Chinese labels: {blank}"
    english = courses_english_in(nb)
    assert not english, f"{path.name}: the course said English on the Chinese page:\n" + "\n".join(english[:30])


def test_the_english_build_shows_the_course_speaking_where_the_chinese_is_scanned(site):
    """The scan has something to find: the English build's runs of the pages where the course's package speaks
    most (the locator, the measured tables, --fix) show its English sentences."""
    for page in ("chapters/07_finding_the_culprit.md", "reference/card.md", "after/fixes.md"):
        assert len(courses_english_in(ran(BOOK / page, "en"))) >= 3, page


def test_the_scan_of_a_chinese_page_finds_the_courses_english():
    from autograder.feedback.wording import say_in

    courses = the_courses_english()
    assert shingles(say_in("en", "notebook: predict noted", shown="a, b")) & courses
    assert not shingles(say_in("zh", "notebook: predict noted", shown="a, b")) & courses
    assert not shingles("RuntimeError: one of the variables needed for gradient computation has been modified by an "
                        "inplace operation") & courses  # PyTorch's, which the catalogue quotes


@pytest.mark.parametrize("path", sorted((ROOT / "exercises" / "zh").glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_a_chinese_exercise_page_says_nothing_in_english(site, path):
    """The Chinese starter notebooks, as the Chinese build ran them (their setup cell chooses Chinese): what
    check() and the rest of the course printed is Chinese (tests/test_zh_notebooks.py runs the solutions)."""
    from tests.test_zh_notebooks import assert_it_said_only_chinese

    assert_it_said_only_chinese(ran(path), path.name)


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
                         + sorted((ROOT / "exercises" / "zh").glob("[0-9][0-9]_*.ipynb")),
                         ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_each_exercise_page_the_build_ran_raised_its_failure_and_nothing_else(site, path):
    """The starter notebooks as the builds ran them (the book's exercise pages are exercises/ itself): each cell
    tagged raises-exception raised its exercise's documented error, and no other cell raised (what nbval's lax
    mode checks, and more: which error)."""
    nb = ran(path)
    exercise = get(nb.metadata["autograder"]["exercise"])
    failures = [c for c in nb.cells if c.cell_type == "code" and "raises-exception" in tags(c)]
    assert failures, "every notebook reproduces its failure first"
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if "raises-exception" in tags(cell):
            assert len(errors) == 1 and exercise.failure.matches(errors[0].ename, errors[0].evalue), \
                f"{_where(index, cell)}: {[(e.ename, e.evalue[:300]) for e in errors]}"
        else:
            assert not errors, f"{_where(index, cell)} raised {errors[0].ename}: {errors[0].evalue[:300]}"


# Find error outputs outside cells tagged raises-exception, and any traceback text outside them.
UNEXPECTED_TRACEBACKS = """() => [...document.querySelectorAll('.cell_output')]
  .filter(out => !out.closest('.cell')?.classList.contains('tag_raises-exception'))
  .filter(out => out.querySelector('.traceback') || out.textContent.includes('Traceback (most recent call last)'))
  .map(out => out.textContent.slice(0, 300))"""


SCREENSHOT_PAGES = ("chapters/08_case_studies.html", "exercises/03_residual_add.html")
"""Kept in book/_build/screenshots as test artifacts (not committed)."""


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our own localhost server
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


ERROR_LINE = re.compile(r"^(\w+(?:Error|Exception)): (.*)$", re.MULTILINE)


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_an_exercise_page_shows_its_failure_cells_real_error(site, path):
    """A reader of the site, who runs nothing, sees the error the exercise is about: the page's failure cell
    (tagged raises-exception) was run by the build and shows the error that the exercise's failure matches."""
    exercise = get(nbformat.read(path, as_version=4).metadata["autograder"]["exercise"])
    page = BeautifulSoup((site / "exercises" / f"{path.stem}.html").read_text(), "html.parser")
    failures = page.select(".cell.tag_raises-exception")
    assert failures, f"{path.stem}: no failure cell on the page"
    for cell in failures:
        output = cell.select_one(".cell_output")
        assert output is not None, f"{path.stem}: the failure cell shows no output"
        said = ERROR_LINE.findall(output.get_text())
        assert said and exercise.failure.matches(*said[-1]), f"{path.stem}: {said[-1:] or output.get_text()[-500:]}"


@pytest.mark.slow
def test_site_in_a_browser(site):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    with serve(site) as base, open_browser() as browser:
        queue, reports = [base + "intro.html"], {}
        while queue:
            url = queue.pop()
            if url in reports:
                continue
            name = url.removeprefix(base)
            shot = SCREENSHOTS / f"{Path(name).stem}.png" if name in SCREENSHOT_PAGES else None
            reports[url] = report = visit(browser, url, screenshot=shot,
                                          inspect=lambda page: page.evaluate(UNEXPECTED_TRACEBACKS))
            for link in report.links:
                target, _ = urldefrag(link)
                if target.startswith(base) and target.endswith(".html") and target not in reports:
                    queue.append(target)

        problems = []
        for url, report in reports.items():
            page = url.removeprefix(base)
            problems += [f"{page}: {p}" for p in report.problems()]
            problems += [f"{page}: unexpected traceback: {t!r}" for t in report.extra]
            for link in report.links:
                target, fragment = urldefrag(link)
                if not target.startswith(base):
                    continue
                if target in reports:
                    if fragment and fragment not in reports[target].ids:
                        problems.append(f"{page}: link to a missing anchor {link.removeprefix(base)}")
                elif status_of(target) != 200:
                    problems.append(f"{page}: broken link {link.removeprefix(base)}")
    pages = {url.removeprefix(base) for url in reports}
    expected = {f"chapters/{p.stem}.html" for p in CHAPTERS} | {f"exercises/{p.stem}.html"
                                                                 for p in EXERCISE_NOTEBOOKS.glob("*.ipynb")}
    expected |= {f"zh/{page.replace('exercises/', 'exercises/zh/')}" for page in expected}  # the Chinese edition
    assert expected <= pages, f"pages never reached from the first page: {sorted(expected - pages)}"
    assert not problems, "\n".join(problems)
    assert all((SCREENSHOTS / f"{Path(p).stem}.png").stat().st_size > 10_000 for p in SCREENSHOT_PAGES)


@pytest.mark.slow
def test_the_browser_helper_reports_what_a_page_did_wrong(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium); CI installs it")
    (tmp_path / "page.html").write_text(
        '<html><body id="top"><a href="gone.html">x</a><img src="missing.png"><img src="https://example.com/a.png">'
        '<img src="http://127.0.0.1:9/other-port.png"><script>console.error("boom")</script><script>undefinedFunction()</script></body></html>')
    (tmp_path / "clean.html").write_text('<html><body><p id="here">fine</p></body></html>')
    with serve(tmp_path) as base, open_browser() as browser:
        bad = visit(browser, base + "page.html")
        clean = visit(browser, base + "clean.html", screenshot=tmp_path / "clean.png")
    assert clean.ok and clean.ids == {"here"} and (tmp_path / "clean.png").stat().st_size > 0
    assert "boom" in bad.console_errors and any("undefinedFunction" in e for e in bad.page_errors)
    assert any("missing.png" in i for i in bad.broken_images)
    blocked = [r for r in bad.failed_requests if r.startswith("blocked (leaves localhost)")]
    assert any("example.com" in r for r in blocked) and any("other-port" in r for r in blocked), bad.failed_requests
    assert not any("missing.png" in r for r in blocked)  # the page's own host is not stopped: it answers 404
    assert bad.links == [base + "gone.html"] and not bad.ok


# ----- what the pages run beside their experiments (autograder.notebook.figures and .lesson, book/_ext) -----

def test_the_book_helpers_import_no_matplotlib_until_a_figure_is_drawn():
    code = ("import sys, autograder, autograder.notebook.figures, autograder.notebook.lesson; "
            "assert 'matplotlib' not in sys.modules, 'imported matplotlib'; "
            "autograder.notebook.figures.draw_links([('a', ['x'])], []); assert 'matplotlib' in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr


def test_a_figure_drawn_in_chinese_has_every_glyph_of_its_labels():
    """In Chinese the course's own labels are Chinese, and the figure is drawn in a font that has their glyphs
    (matplotlib warns of each glyph its font lacks: here that is an error)."""
    code = ("import warnings, torch; warnings.simplefilter('error'); "
            "from autograder.notebook.figures import draw_storage, draw_graph, snapshot_saved; "
            "x = torch.arange(6.0); fig = draw_storage(x, {'x[1:4]': x[1:4]}); "
            "a = torch.ones(3, requires_grad=True); b = a.exp(); "
            "ax = draw_graph(b.grad_fn, snapshot_saved(b.grad_fn)); "
            "fig.canvas.draw(); ax.figure.canvas.draw(); "
            "texts = [t.get_text() for f in (fig, ax.figure) for t in f.findobj(lambda o: hasattr(o, 'get_text'))]; "
            "print('LABELS', texts)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg", "COURSE_LANGUAGE": "zh"})
    assert done.returncode == 0, done.stderr[-3000:]
    labels = done.stdout.split("LABELS", 1)[1]
    assert re.search(r"存储", labels) and re.search(r"保存", labels), labels


def test_check_answer_accepts_the_right_answer_and_refuses_a_wrong_one():
    import torch

    from autograder.notebook.lesson import check_answer

    def gelu_input_written():
        a = torch.randn(4, requires_grad=True)
        h = a.exp()
        out = torch.nn.functional.gelu(h)    # saves its input, h
        h.add_(1)
        out.sum().backward()

    text = check_answer(gelu_input_written, raises=True, when="backward", tensor="output 0 of Add", found=1,
                        expected=0)
    assert "5 of 5 predicted parts right" in text
    with pytest.raises(AssertionError, match="the book's answer is wrong"):
        check_answer(gelu_input_written, raises=True, tensor="output 0 of Exp")
    with pytest.raises(AssertionError, match="when: not judged"):
        check_answer(lambda: None, raises=False, when="backward")   # no error: there is no "when" to judge
    assert "1 of 1" in check_answer(lambda: None, raises=False)


def test_live_bytes_counts_what_ops_make_until_it_is_freed():
    import torch

    from autograder.notebook.lesson import LiveBytes

    made = torch.ones(256)                         # 1 kB, made before: never counted
    with LiveBytes() as live:
        a = made * 2                               # +1 kB
        b = a.view(16, 16)                         # a view: a's storage, counted once
        a.mul_(2)                                  # in place: nothing new
        del a, b                                   # freed at the next op
        c = made + 1                               # +1 kB, after -1 kB
    assert live.samples == [1024, 1024, 1024, 1024] and live.peak == 1024
    assert live.ops == ["mul.Tensor", "view.default", "mul_.Tensor", "add.Tensor"]
    del c


def load_extension():
    spec = importlib.util.spec_from_file_location("course_links", BOOK / "_ext" / "course_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_exercise_role_finds_a_page_by_id_whatever_its_number():
    course_links = load_extension()
    for path in EXERCISE_NOTEBOOKS.glob("*.ipynb"):
        exercise_id = path.stem.split("_", 1)[1]
        assert course_links.exercise_docname(BOOK, exercise_id) == f"/exercises/{path.stem}"
    with pytest.raises(Exception, match="no single page exercises/NN_no_such_exercise.ipynb"):
        course_links.exercise_docname(BOOK, "no_such_exercise")


@pytest.mark.slow
def test_kernels_the_build_starts_do_not_warn_of_an_unencrypted_transport(capfd):
    """The build's kernels are started by myst-nb with no configuration; the extension's setting is what
    makes them encrypted. The same kernel without it warns (which is what this test would see)."""
    from jupyter_client.manager import KernelManager

    setting = KernelManager.class_traits().get("transport_encryption")
    if setting is None:
        pytest.skip("this jupyter_client has no transport encryption (nor does its ipykernel warn)")

    def start_a_kernel_as_myst_nb_does() -> str:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
        NotebookClient(nb, kernel_name="python3").execute()
        assert nb.cells[0].outputs[0].text == "42\n"
        return capfd.readouterr().err

    default = setting.default_value
    try:
        if "without encryption" not in start_a_kernel_as_myst_nb_does():
            pytest.skip("this ipykernel does not warn about an unencrypted transport (it did from 7.3)")
        load_extension().encrypt_kernel_transport(app=None)
        assert "without encryption" not in start_a_kernel_as_myst_nb_does()
    finally:
        setting.default_value = default


# --- the Chinese edition (scripts/build-book, book/locale) --------------------------------------------------

def _pages(html: Path) -> list[str]:
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                  if not p.relative_to(html).as_posix().startswith(("_", "zh/", "genindex", "search", "index.html")))


def test_every_page_has_its_chinese_page_and_each_links_to_the_other(site):
    """Every English page links to the same page in Chinese, and back; the Chinese page is in Chinese and says so."""
    counterpart = load_extension().counterpart
    english = _pages(site)
    assert len(english) >= 20
    for page in english:
        name = page.removesuffix(".html")
        link = BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser").select_one(
            ".course-edition-switch a")
        assert link is not None and link["href"] == counterpart(name, "en"), f"{page}: no link to the Chinese page"
        chinese = (site / page).parent / counterpart(name, "en")
        assert chinese.resolve().is_file(), f"{page}: its Chinese page {chinese} was not built"
        text = chinese.read_text(encoding="utf-8")
        assert 'lang="zh-CN"' in text, chinese
        zh_name = chinese.resolve().relative_to((site / "zh").resolve()).as_posix().removesuffix(".html")
        assert counterpart(zh_name, "zh") in text, f"{chinese}: no link back to {page}"
        body = BeautifulSoup(text, "html.parser").select_one("main") or BeautifulSoup(text, "html.parser")
        assert len(re.findall(r"[\u4e00-\u9fff]", body.get_text())) > 100, f"{chinese}: hardly any Chinese"


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.relative_to(BOOK).as_posix())
def test_a_chinese_page_shows_the_english_code(site, path):
    """One source of code per page: the Chinese page's code cells are the English page's, character for
    character, and the build ran them (with the same asserts)."""
    page = path.relative_to(BOOK).with_suffix(".html").as_posix()
    def code(html: Path) -> list[str]:
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        return [pre.get_text() for pre in soup.select(".cell_input pre")]
    english, chinese = code(site / page), code(site / "zh" / page)
    assert english == chinese, f"{page}: the Chinese page's code differs from the English"
    source = read_myst_markdown_notebook(path.read_text(encoding="utf-8"))
    shown = [c for c in source.cells if c.cell_type == "code"
             and not {"remove-input", "remove-cell"} & set(c.metadata.get("tags", []))]
    assert len(english) >= min(1, len(shown)), f"{page}: the built page shows none of its code"

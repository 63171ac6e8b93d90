"""`autograder release OUT --repository URL`: the course as a teacher hands it to students, without its answers.

OUT holds what a student needs and nothing that gives an exercise away:
- `autograder/`, `pyproject.toml`, `README.md`: the installable package (the checker, `predict`, the locator,
  the public inputs `check()` judges against); never `references/` (the intended math and the catalogues of
  known answers) nor `solutions/`;
- `exercises/`: the exercise notebooks, made from the solutions as `autograder assign` makes them, their setup
  cell installing the course from URL;
- `book/`: the book's source, its launch buttons and links pointing at URL, without the blocks a chapter marks
  as an exercise's solution (a MyST directive with `:class: solution`), and with each page of LEFT_OUT (the
  exercises' fixes) replaced by a page that says the teacher holds it back;
- `binder/`: Binder's environment, for the book's Binder buttons.

With `fixes=False` (`--no-fixes`, for a graded class) the edition's package proposes no literal fix: its
`check()` and `autograder check` keep the diagnosis (what, where, why) and leave out every rewrite of a line and
every fix in words (feedback/describe.py's SHOW_FIXES, written False in the edition's copy). Without it, the
edition is for self-study and shows them, as the course does.

URL is where the teacher publishes OUT (a repository of their own): the setup cell, pyproject.toml's
Repository and the book's buttons all name it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import yaml

from .assign import AssignError, exercise_notebook
from .bundle.source import CHECKOUT, ExportError, copy_source
from .feedback.wording import say
from .intake.files import write_atomically

URL = re.compile(r"^(https?://|git@|ssh://)[^\s\"'`]+$")
STUDENT_README = """# {title}: the student edition

The exercises of the course on PyTorch's `modified by an inplace operation` error, its book, and the checker
that tells you what is still wrong with your answer. Its answers are not here: your teacher grades them.

Install (Python 3.10 or newer, with torch already installed):

```bash
pip install "inplace-autograd-course @ git+{url}"
```

Then open `exercises/` in Jupyter (`pip install jupyterlab && jupyter lab exercises/`), or use the launch
buttons of the book (`book/`, built with `jupyter-book build book`). In each notebook: predict, run the
failure, find the line, write your fix in the answer cell, and run `check("<exercise>")`.
"""
# The book's pages that give the exercises' answers away (book/after/fixes.md shows each exercise's fix as code):
# the edition has, in each one's place, a page of the same title saying it was left out, so that the table of
# contents and the chapters' links to it still hold (its words: "cli: release left out page").
# tests/test_release.py looks for every line of every answer in the edition.
LEFT_OUT = ("after/fixes.md",)
_OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{[^}]+\}")
_OPTION = re.compile(r"^:[\w-]+:")
_SOLUTION_CLASS = re.compile(r"^:class:.*\bsolution\b")


class ReleaseError(Exception):
    """The student edition cannot be made (a bad URL, OUT not empty); the message says why."""


def release(out: Path, repository_url: str, checkout: Path = CHECKOUT, *, fixes: bool = True) -> list[Path]:
    """Writes the student edition into `out` (which must be empty or missing); returns its top-level parts.
    `fixes`: whether the edition's feedback proposes fixes (False for a graded class)."""
    if not URL.match(repository_url):
        raise ReleaseError(say("cli: release repository", got=repr(repository_url)))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(say("cli: release not empty", out=out))
    try:
        copy_source(out)
    except ExportError as e:
        raise ReleaseError(str(e)) from None
    _package_points_at(out, repository_url)
    if not fixes:
        _without_fixes(out)
    _exercises(checkout / "solutions", out / "exercises", repository_url)
    _book(checkout / "book", out / "book", repository_url)
    if (checkout / "binder").is_dir():
        shutil.copytree(checkout / "binder", out / "binder")
    return sorted(out.iterdir())


def _package_points_at(out: Path, url: str) -> None:
    pyproject = out / "pyproject.toml"
    text, found = re.subn(r'^Repository = "[^"]*"$', f'Repository = "{url}"', pyproject.read_text(), flags=re.M)
    if found != 1:
        raise ReleaseError(say("cli: release no repository line"))
    write_atomically(pyproject, text)
    write_atomically(out / "README.md", STUDENT_README.format(title="In-place autograd errors", url=url))


FIXES_SWITCH = Path("autograder") / "feedback" / "describe.py"
"""Where the package says whether its feedback proposes fixes (its line `SHOW_FIXES = True`)."""


def _without_fixes(out: Path) -> None:
    """The edition's package with SHOW_FIXES False: its self-check proposes no fix."""
    path = out / FIXES_SWITCH
    text, found = re.subn(r"^SHOW_FIXES = True$", "SHOW_FIXES = False", path.read_text(encoding="utf-8"),
                          flags=re.M)
    if found != 1:
        raise ReleaseError(say("run: release no fixes switch", path=FIXES_SWITCH))
    write_atomically(path, text)


def _exercises(solutions: Path, folder: Path, url: str) -> None:
    sources = sorted(solutions.glob("*.ipynb"))
    if not sources:
        raise ReleaseError(say("cli: release no solutions", folder=solutions))
    for source in sources:
        try:
            notebook = exercise_notebook(nbformat.read(source, as_version=4), url)
        except AssignError as e:
            raise ReleaseError(f"{source.name}: {e}") from None
        write_atomically(folder / source.name, nbformat.writes(notebook) + "\n")


def provider(url: str) -> str:
    """The kind of forge at `url`, for the book theme's repository buttons: GitHub, GitLab or Bitbucket by
    name, else GitLab's (the usual self-hosted one)."""
    host = urlsplit(url if "://" in url else "ssh://" + url.replace(":", "/", 1)).hostname or ""
    return next((name for name in ("github", "bitbucket") if name in host), "gitlab")


def _book(book: Path, folder: Path, url: str) -> None:
    """The book's source without its build and its solution blocks; its repository is `url`. Its exercises/
    (a link to ../exercises in the course) links to the edition's own exercises/."""
    shutil.copytree(book, folder, symlinks=True, ignore=shutil.ignore_patterns("_build", "__pycache__", ".*"))
    path = folder / "_config.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(config, dict) or not isinstance(config.get("repository"), dict):
        raise ReleaseError(say("cli: release no book repository"))
    config["repository"]["url"] = url
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx.setdefault("html_theme_options", {})["repository_provider"] = provider(url)
    write_atomically(path, "# The student edition's book (autograder release): its repository is the teacher's.\n"
                     + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    for name in LEFT_OUT:
        page = folder / name
        if page.is_file():
            title = next((ln[2:].strip() for ln in page.read_text(encoding="utf-8").splitlines()
                          if ln.startswith("# ")), "Left out")
            write_atomically(page, say("cli: release left out page", title=title))
    for page in folder.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        kept = without_solutions(text)
        if kept != text:
            write_atomically(page, kept)


def without_solutions(text: str) -> str:
    """MyST text without its directive blocks (fenced by ``` or :::) whose options say `:class: solution`."""
    lines, kept, i = text.splitlines(keepends=True), [], 0
    while i < len(lines):
        opening = _OPENING.match(lines[i])
        if not opening:
            kept.append(lines[i])
            i += 1
            continue
        fence, end = opening["fence"], i + 1
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        options = [ln.strip() for ln in lines[i + 1:end]]
        options = options[:next((k for k, ln in enumerate(options) if not _OPTION.match(ln)), len(options))]
        if not any(_SOLUTION_CLASS.match(ln) for ln in options):
            kept.append(lines[i])  # not a solution: its body is read on (a block inside it may be one)
            i += 1
            continue
        i = end + 1
    return "".join(kept)

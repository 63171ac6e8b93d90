"""House rule: a platform is one module of autograder/platforms/ implementing bundle/platform.py's protocol, and
nothing else names it. The proof adds a toy platform to a copy of the working tree and shows that the command
line offers it (`autograder export toy`), that its bundle is built with the common options (the exercises asked
for, their references only, the salt), and that its grader (`python -m autograder.platforms.toy`), run as the
platform runs it, grades a folder of files into the platform's own results format through the shared skeleton
(files locked away, results reserved and written). The worker is the in-process one there: which worker grades
is bundle/container.py's business, tested with the real platforms in test_export.py and test_platforms_as_root.py.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, SOLUTIONS
from tests.test_adding_an_exercise import python_of, working_tree

TOY = '''"""A toy platform: a folder bundle, and results as {"points": ..., "verdicts": [...]}."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..bundle import grader
from ..bundle.config import CONFIG_NAME
from ..bundle.container import leave
from ..bundle.platform import Layout, MemoryLimit
from ..bundle.source import copy_references, copy_source, write_text


class Toy:
    name = "toy"
    summary = "a folder for the toy platform"
    layout = Layout(root="/toy", submission="inbox", results="outbox", private=("bundle", "inbox"))
    memory = MemoryLimit(4096, "the toy's settings page")

    def add_options(self, parser):
        parser.add_argument("--colour", default="blue", help="the toy's colour")

    def options(self, args):
        return {"colour": args.colour}

    def export(self, out, config, args):
        write_text(out / "bundle" / CONFIG_NAME, config.to_json())
        copy_source(out / "bundle" / "course")
        copy_references(out / "bundle" / "references", config.exercises)
        return [f"wrote the toy bundle under {out / 'bundle'}"]

    def add_container_options(self, parser):
        pass

    def config_path(self, root, args):
        return root / "bundle" / CONFIG_NAME

    def graded(self, config, args):
        return config

    def results(self, results, config, seconds, note):
        return {"points": sum(r.score for r in results), "colour": config.options["colour"],
                "verdicts": [{"exercise": r.exercise, "status": r.status.value} for r in results]}

    def broken(self, why, seconds):
        return {"points": 0, "broken": why, "verdicts": []}

    def message(self, data):
        return f"toy: {data['points']} points"


PLATFORM = Toy()

if __name__ == "__main__":
    leave(grader.main(PLATFORM))
'''

IN_THE_CONTAINER = r"""
import contextlib, sys
from autograder.bundle import container, grader
from autograder.platforms import platforms
from autograder.runner import InProcessRunner

container.make_runner = lambda config: contextlib.nullcontext(InProcessRunner())
sys.exit(grader.main(platforms()["toy"], ["--root", sys.argv[1]]))
"""


def run(copy: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_REFERENCES", "PYTHONPATH")}
    proc = subprocess.run([str(copy.parent / "venv" / "bin" / "python"), *args], cwd=copy, env={**clean, **(env or {})},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the working tree with the toy platform's module added, and nothing else changed."""
    copy = tmp_path_factory.mktemp("course") / "course"
    for name in working_tree():
        source, target = ROOT / name, copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    (copy / "autograder" / "platforms" / "toy.py").write_text(TOY)
    python_of(copy)
    return copy


@pytest.mark.slow
def test_a_new_platform_needs_only_its_module(course, tmp_path):
    # the command line offers it, with the common options and its own
    listed = run(course, "-m", "autograder", "export", "--help").stdout
    assert "toy" in listed and "a folder for the toy platform" in listed
    own = run(course, "-m", "autograder", "export", "toy", "--help").stdout
    assert "--colour" in own and "--memory-mb" in own and "--public-salt" in own

    # its bundle: the exercises asked for, only their references, the term's salt, its own options
    out = tmp_path / "toy-export"
    said = run(course, "-m", "autograder", "export", "toy", "--out", str(out), "--exercise", "data_trap",
               "--colour", "green", env={"AUTOGRADER_SALT": "toy-term-salt"}).stdout
    assert "wrote the toy bundle" in said and "toy's limit is 4096 MB: enough" in said
    bundle = out / "bundle"
    config = json.loads((bundle / "autograder_config.json").read_text())
    assert config["exercises"] == ["data_trap"] and config["salt"] == "toy-term-salt"
    assert config["options"] == {"colour": "green"}
    assert sorted(p.name for p in (bundle / "references").iterdir()) == ["README.md", "data_trap.py"]
    assert (bundle / "course" / "autograder" / "platforms" / "toy.py").is_file()

    # its grader, in the toy's layout, as the toy runs it (the module is the entry point)
    assert "toy's container" in run(course, "-m", "autograder.platforms.toy", "--help").stdout
    root = tmp_path / "toy"
    shutil.copytree(bundle, root / "bundle")
    (root / "inbox").mkdir()
    shutil.copy(SOLUTIONS / "02_data_trap.ipynb", root / "inbox")
    done = run(course, "-c", IN_THE_CONTAINER, str(root),
               env={"AUTOGRADER_REFERENCES": str(root / "bundle" / "references")})
    assert "toy: 10 points" in done.stdout
    results = json.loads((root / "outbox" / "results.json").read_text())
    assert results == {"points": 10, "colour": "green", "verdicts": [{"exercise": "data_trap", "status": "passed"}]}
    modes = {name: stat.S_IMODE((root / name).stat().st_mode) for name in ("bundle", "inbox", "outbox")}
    assert modes == {"bundle": 0o700, "inbox": 0o700, "outbox": 0o755}

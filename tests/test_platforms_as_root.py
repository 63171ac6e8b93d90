"""Both platforms' bundles run as the platforms run them: as root. Gradescope's setup.sh builds the grader
(with PLATFORM_PYTHON; 3.10 as on Gradescope's default base image, Ubuntu 22.04, where asked), then
run_autograder grades; PrairieLearn's
run.sh grades in its /grade layout. Each time a submission attacks the grader: it tries to read the
configuration (the term's salt), the references, a file only root may read and /etc/shadow, to list the
grader's folder and to write into results/. Every attempt must fail, and an honest submission graded in the
same bundle must still get full marks.

Where bubblewrap cannot run (a platform's container may forbid its namespaces) the worker drops to the
unprivileged user setup.sh makes: a `bwrap` that fails as it does there is put first on PATH. Where it runs,
the same attack meets the sandbox.

Needs root and useradd (skips otherwise) and that Python with torch wheels for it: those are fetched once
into ~/.cache/autograder-tests/ from the package index pip is set up with; setup.sh then installs from a
local index made of them, offline (in a network namespace of its own where one can be made). The user it
creates is removed afterwards, if it was not there before.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from importlib.metadata import requires
from pathlib import Path

import nbformat
import pytest

from autograder.bundle.config import BundleConfig
from autograder.bundle.container import STUDENT_USER
from autograder.bundle.source import TORCH_PIN
from autograder.intake.submission import answer_code, is_answer_cell
from autograder.platforms import gradescope, prairielearn
from tests.conftest import SOLUTIONS

USERADD = shutil.which("useradd") or shutil.which("useradd", path="/usr/sbin:/sbin")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="the platforms run the grader as root"),
    pytest.mark.skipif(USERADD is None, reason="no useradd: setup.sh could not make the student user"),
]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "autograder-tests"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FAILING_BWRAP = """#!/bin/sh
# bubblewrap as it fails in a container that forbids new namespaces
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow \
non-privileged user namespaces." >&2
exit 1
"""
ATTACK = '''
import json as _json
import os as _os

_seen = {}
for _name, (_how, _path) in _json.loads(TARGETS).items():
    try:
        if _how == "read":
            with open(_path, "rb") as _f:
                _seen[_name] = "LEAKED " + repr(_f.read(60))
        elif _how == "list":
            _seen[_name] = "LEAKED " + repr(sorted(_os.listdir(_path))[:6])
        elif _how == "write":  # a file only the grader writes (results.json, reserved before student code runs)
            with open(_path, "r+") as _f:
                _f.write('{"score": 1000}')
            _seen[_name] = "LEAKED written"
        else:  # "create": a file where only the grader writes
            with open(_path, "x") as _f:
                _f.write('{"score": 1000}')
            _seen[_name] = "LEAKED created"
    except OSError as _e:
        _seen[_name] = type(_e).__name__
_seen["environment"] = "LEAKED" if any(_k.startswith("AUTOGRADER") for _k in _os.environ) else "clean"
try:  # what happened, where the test can read it (a folder the sandbox does not show)
    with open(_os.path.join(DROP, "report.json"), "w") as _f:
        _json.dump({"uid": _os.getuid(), "seen": _seen}, _f)
except OSError:
    pass
if any(_v.startswith("LEAKED") for _v in _seen.values()):
    raise RuntimeError("ATTACK SUCCEEDED: " + repr(_seen))
'''


def user_exists(name: str = STUDENT_USER) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


PLATFORM_PYTHON = os.environ.get("AUTOGRADER_PLATFORM_PYTHON", f"{sys.version_info[0]}.{sys.version_info[1]}")
"""The Python the bundle is run with. By default this one's version, whose CPU build of torch is on local disk
here; AUTOGRADER_PLATFORM_PYTHON=3.10 runs it as on Gradescope's default base image (Ubuntu 22.04), which
first fetches the wheels for 3.10 once (PyPI's torch for it is the CUDA build: about 2.7 GB)."""


def find_python() -> tuple[Path, Path] | None:
    """(interpreter, its installation) of PLATFORM_PYTHON: the system's, on PATH, or installed by pyenv."""
    version = PLATFORM_PYTHON
    candidates = [f"/usr/bin/python{version}", shutil.which(f"python{version}"),
                  *sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))]
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run([str(candidate), "-c", f"import sys; print(sys.version.startswith('{version}.')); "
                                   "print(sys.executable); print(sys.base_prefix)"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = done.stdout.split("\n")
        if done.returncode == 0 and lines[0] == "True":
            return Path(lines[1]), Path(lines[2])
    return None


def reachable_by_all(path: Path) -> bool:
    """Whether any user can reach `path` (every folder on the way searchable by others)."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])


def python_for_everyone(python: Path, prefix: Path, dest: Path) -> Path:
    """An interpreter the student user can run: `python` itself where it can, else a copy of its installation
    (pyenv's lies under root's home, 0700). The copy's binary finds libpython through an absolute RUNPATH
    into the original; it is rewritten to $ORIGIN/../lib (a shorter string, padded: what patchelf does)."""
    if reachable_by_all(prefix) and reachable_by_all(python.parent):
        return python
    shutil.copytree(prefix, dest, symlinks=True)
    binary = dest / "bin" / python.name
    old, new = str(prefix / "lib").encode() + b"\0", b"$ORIGIN/../lib\0"
    data = binary.read_bytes()
    if old in data and len(new) <= len(old):
        binary.write_bytes(data.replace(old, new.ljust(len(old), b"\0")))
    return binary


def wheelhouse(python: Path) -> Path:
    """A folder with every wheel setup.sh installs for this Python: checked offline, completed online once."""
    needs = [r for r in requires("inplace-autograd-course") or [] if "extra ==" not in r]
    wanted = ["pip", "setuptools>=68", "wheel", "babel>=2.12", TORCH_PIN, *needs]  # babel: the build's (setup.py)
    folder = CACHE / f"wheels-py{python.name.removeprefix('python')}"
    folder.mkdir(parents=True, exist_ok=True)
    download = [str(python), "-m", "pip", "download", "--quiet", "--dest", str(folder), "--find-links", str(folder)]
    offline = subprocess.run([*download, "--no-index", *wanted], capture_output=True, text=True, timeout=600)
    if offline.returncode != 0:
        online = subprocess.run([*download, *wanted], capture_output=True, text=True, timeout=1800)
        if online.returncode != 0:
            pytest.skip(f"no wheels of torch and the course's packages for {python.name} here, and none could "
                        f"be fetched: {online.stderr.strip()[-300:]}")
    return folder


def simple_index(wheels: Path, dest: Path) -> str:
    """A PEP 503 index of the folder's files (pip's --index-url, as PyTorch's CPU index is): its file:// URL."""
    projects: dict[str, list[Path]] = {}
    for f in sorted(wheels.iterdir()):
        name = f.name.split("-")[0] if f.suffix == ".whl" else re.sub(r"-[^-]+\.(tar\.gz|zip)$", "", f.name)
        projects.setdefault(re.sub(r"[-_.]+", "-", name).lower(), []).append(f)
    for project, files in projects.items():
        (dest / project).mkdir(parents=True)
        links = "".join(f'<a href="{f.as_uri()}">{f.name}</a>\n' for f in files)
        (dest / project / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return dest.as_uri() + "/"


def python_on_path(python: Path, spare: Path) -> Path:
    """A folder whose `python3` is this Python, as the system's python3 is 3.10 on Ubuntu 22.04. Its own folder
    where it has one: the venv then links to a file inside the installation, which the sandbox shows (it
    binds the installation, not a link to it that lies elsewhere)."""
    own = python.parent / "python3"
    if own.exists() and own.resolve() == python.resolve():
        return python.parent
    spare.mkdir()
    (spare / "python3").symlink_to(python)
    return spare


def network_namespace() -> list[str]:
    """`unshare --net`, where it works: setup.sh then provably reaches no network."""
    try:
        ok = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return ["unshare", "--net"] if ok else []


@dataclass
class Box:
    base: Path  # world-searchable (pytest's temporary folders are root's alone): the student user must reach the venv
    python: Path
    venv: Path
    source: Path  # the unzipped Gradescope bundle, after setup.sh
    prairielearn: Path  # a PrairieLearn export
    fake_bin: Path  # a failing bwrap
    secret: Path  # a file only root may read
    setup_seconds: float
    setup_output: str


@pytest.fixture(scope="module")
def box():
    found = find_python()
    if found is None:
        pytest.skip(f"no Python {PLATFORM_PYTHON} here")
    base = Path(tempfile.mkdtemp(prefix="autograder-as-root-"))
    base.chmod(0o755)
    made_user = not user_exists()
    try:
        python = python_for_everyone(*found, base / "python")
        start = time.perf_counter()
        index = simple_index(wheelhouse(python), base / "index")
        print(f"\nwheels for {python.name} checked in {time.perf_counter() - start:.0f} s")
        bin_dir = python_on_path(python, base / "bin")
        fake_bin = base / "fakebin"
        fake_bin.mkdir()
        (fake_bin / "bwrap").write_text(FAILING_BWRAP)
        (fake_bin / "bwrap").chmod(0o755)
        secret = base / "root-only.txt"
        secret.write_text("ROOT-SECRET\n")
        secret.chmod(0o600)

        config = BundleConfig(exercises=("residual_add", "data_trap"), salt="as-root-test-salt")
        bundle = gradescope.export(base / "gs-export", config)
        source = base / "autograder" / "source"
        with zipfile.ZipFile(bundle) as zf:
            zf.extractall(source)
            for info in zf.infolist():  # zipfile drops modes on extract; Gradescope keeps them
                (source / info.filename).chmod((info.external_attr >> 16) & 0o777)
        prairielearn.export(base / "pl-export", config, image="test/inplace-grader:1")

        env = {"PATH": f"{bin_dir}:{SYSTEM_PATH}", "HOME": "/root", "LANG": "C.UTF-8",
               "AUTOGRADER_VENV": str(base / "venv"), "AUTOGRADER_TORCH_INDEX": index, "PIP_INDEX_URL": index,
               "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        start = time.perf_counter()
        setup = subprocess.run([*network_namespace(), "bash", str(source / "setup.sh")], cwd=source, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)
        seconds = time.perf_counter() - start
        print(f"setup.sh as root, offline: {seconds:.0f} s")
        assert setup.returncode == 0, setup.stdout[-4000:]
        yield Box(base, python, base / "venv", source, base / "pl-export", fake_bin, secret, seconds, setup.stdout)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        if made_user and user_exists():
            subprocess.run(["userdel", STUDENT_USER], capture_output=True)


def solution(exercise_id: str) -> Path:
    """The solution notebook of an exercise, whatever its number."""
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    return path


def attack_notebook(dest: Path, targets: dict[str, tuple[str, str]], drop: Path) -> Path:
    """The data_trap solution with the attack in front of its answer: full marks only if every attempt failed."""
    nb = nbformat.read(solution("data_trap"), as_version=4)
    cell = next(c for c in nb.cells if is_answer_cell(c))
    attack = ATTACK.replace("TARGETS", repr(json.dumps(targets))).replace("DROP", repr(str(drop)))
    cell.source = attack + "\n" + cell.source
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


def drop_folder(box: Box, name: str) -> Path:
    drop = box.base / "drop" / name
    drop.mkdir(parents=True)
    drop.chmod(0o777)
    return drop


def common_targets(box: Box) -> dict[str, tuple[str, str]]:
    return {"a file only root reads": ("read", str(box.secret)), "/etc/shadow": ("read", "/etc/shadow")}


def run_env(box: Box, root: Path, sandbox: bool, **extra: str) -> dict[str, str]:
    path = SYSTEM_PATH if sandbox else f"{box.fake_bin}:{SYSTEM_PATH}"
    return {"PATH": path, "HOME": "/root", "LANG": "C.UTF-8", "AUTOGRADER_ROOT": str(root), **extra}


def run_all(commands: list[tuple[list[str], dict, Path]]) -> list[tuple[subprocess.CompletedProcess, float]]:
    """Starts every grader at once (one submission each, as on the platform), waits for all, with wall times."""
    procs = [(subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
              time.perf_counter()) for cmd, env, cwd in commands]
    done = []
    try:
        for (proc, start), (cmd, _, _) in zip(procs, commands):
            out, _ = proc.communicate(timeout=600)
            done.append((subprocess.CompletedProcess(cmd, proc.returncode, out), time.perf_counter() - start))
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def assert_every_attempt_failed(drop: Path, targets: dict) -> None:
    report = json.loads((drop / "report.json").read_text())
    assert report["uid"] == pwd.getpwnam(STUDENT_USER).pw_uid  # the worker ran as the student user, not root
    assert report["seen"] == {**{name: "PermissionError" for name in targets}, "environment": "clean"}


def assert_root_only_writes(results: Path) -> None:
    assert sorted(p.name for p in results.iterdir() if not p.name.startswith(".")) == ["results.json"]
    for path, mode in ((results, 0o755), (results / "results.json", 0o644)):
        st = path.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, mode)


def test_the_attack_says_what_it_reached(tmp_path, grade):
    """The control: in process, as root, where nothing stops it, the attack reads, lists and writes, and the
    exercise fails saying so. The platform tests below then mean something when it scores full marks."""
    (tmp_path / "secret.txt").write_text("SECRET")
    (tmp_path / "results.json").write_text("{}")
    targets = {"read": ("read", str(tmp_path / "secret.txt")), "list": ("list", str(tmp_path)),
               "write": ("write", str(tmp_path / "results.json")), "create": ("create", str(tmp_path / "forged.json"))}
    result = grade("data_trap", answer_code(attack_notebook(tmp_path / "a" / "06.ipynb", targets, tmp_path)).code)
    assert result.score == 0 and "ATTACK SUCCEEDED" in result.output
    seen = json.loads((tmp_path / "report.json").read_text())["seen"]
    assert all(seen[name].startswith("LEAKED") for name in targets) and "SECRET" in seen["read"]


# ---- Gradescope --------------------------------------------------------------------------------------------


def test_setup_sh_builds_the_grader_offline_as_root(box):
    print(f"setup.sh: {box.setup_seconds:.0f} s")
    assert "grader ready, torch 2.13.0" in box.setup_output
    version = subprocess.run([str(box.venv / "bin" / "python"), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True)
    assert version.stdout.strip() == str(tuple(int(n) for n in PLATFORM_PYTHON.split(".")))
    user = pwd.getpwnam(STUDENT_USER)
    assert user.pw_uid != 0 and user.pw_shell.endswith("nologin") and not Path(user.pw_dir).exists()
    site = next((box.venv / "lib").glob(f"python{PLATFORM_PYTHON}/site-packages"))
    for path in (box.venv / "bin" / "python", site / "torch" / "__init__.py", site / "autograder" / "__init__.py"):
        assert path.stat().st_mode & stat.S_IROTH and not path.stat().st_mode & stat.S_IWOTH
    for path in (box.source, box.source / "autograder_config.json", box.source / "references" / "data_trap.py"):
        st = path.stat()
        assert st.st_uid == 0 and not st.st_mode & 0o077, path  # root's alone


def gradescope_root(box: Box, name: str, files: list[Path]) -> Path:
    """/autograder as Gradescope lays it out after setup.sh: source/, run_autograder, submission/."""
    root = box.base / name
    shutil.copytree(box.source, root / "source", symlinks=True)
    shutil.copy2(box.source / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    for f in files:
        shutil.copy(f, root / "submission" / f.name)
    return root


def gradescope_targets(box: Box, root: Path) -> dict[str, tuple[str, str]]:
    return {"configuration": ("read", str(root / "source" / "autograder_config.json")),
            "references": ("read", str(root / "source" / "references" / "data_trap.py")),
            "the grader's folder": ("list", str(root / "source")),
            "results.json": ("write", str(root / "results" / "results.json")),
            "results/": ("create", str(root / "results" / "forged.json")),
            "a file in results/": ("create", str(root / "results" / "pwned.json")),
            **common_targets(box)}


@pytest.mark.parametrize("sandbox", [False, True], ids=["student-user", "bubblewrap"])
def test_gradescope_run_autograder_as_root(box, sandbox):
    name = "gs-bwrap" if sandbox else "gs-plain"
    root = box.base / name
    drop = drop_folder(box, name)
    targets = gradescope_targets(box, root)
    attack = attack_notebook(box.base / "attacks" / name / "06_data_trap.ipynb", targets, drop)
    root = gradescope_root(box, name, [solution("residual_add"), attack])
    ((proc, seconds),) = run_all([(["bash", str(root / "run_autograder")],
                                   run_env(box, root, sandbox, AUTOGRADER_VENV=str(box.venv)), root)])
    print(f"run_autograder ({name}): {seconds:.1f} s")
    assert proc.returncode == 0, proc.stdout
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 20, data["output"]  # the honest answer, and the attack's (it failed at every step)
    assert all(t["status"] == "passed" for t in data["tests"]) and "ATTACK" not in json.dumps(data)
    assert data["execution_time"] <= seconds
    assert_root_only_writes(root / "results")
    if sandbox:
        assert "NOT SANDBOXED" not in proc.stdout and not (drop / "report.json").exists()  # the sandbox hid it
    else:
        assert "NOT SANDBOXED: bubblewrap failed: bwrap: No permissions" in proc.stdout
        assert f"as user {STUDENT_USER}" in proc.stdout
        assert_every_attempt_failed(drop, targets)


# ---- PrairieLearn ------------------------------------------------------------------------------------------


def grade_root(box: Box, name: str, student: Path) -> Path:
    """/grade as PrairieLearn lays it out: data/, serverFilesCourse/ (the listed folders), student/."""
    root = box.base / name / "grade"
    shutil.copytree(box.prairielearn / "serverFilesCourse", root / "serverFilesCourse")
    (root / "student").mkdir(parents=True)
    shutil.copy(student, root / "student" / student.name)
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text("{}")
    return root


def test_prairielearn_run_sh_as_root_without_bubblewrap(box):
    server = "serverFilesCourse/inplace_autograder"
    attack_root = box.base / "pl-attack" / "grade"
    drop = drop_folder(box, "pl-attack")
    targets = {"configuration": ("read", str(attack_root / server / "autograder_config.json")),
               "references": ("read", str(attack_root / server / "references" / "data_trap.py")),
               "the grader's folder": ("list", str(attack_root / "serverFilesCourse")),
               "results.json": ("write", str(attack_root / "results" / "results.json")),
               "results/": ("create", str(attack_root / "results" / "forged.json")),
               "a file in results/": ("create", str(attack_root / "results" / "pwned.json")),
               **common_targets(box)}
    attack = attack_notebook(box.base / "attacks" / "pl" / "06_data_trap.ipynb", targets, drop)
    roots = {"data_trap": grade_root(box, "pl-attack", attack),
             "residual_add": grade_root(box, "pl-honest", solution("residual_add"))}
    done = run_all([(["bash", str(root / server / "run.sh"), exercise],
                     run_env(box, root, False, AUTOGRADER_PYTHON=str(box.venv / "bin" / "python")), root)
                    for exercise, root in roots.items()])
    for (exercise, root), (proc, seconds) in zip(roots.items(), done):
        print(f"run.sh {exercise}: {seconds:.1f} s")
        assert proc.returncode == 0, proc.stdout
        assert f"as user {STUDENT_USER}" in proc.stdout
        data = json.loads((root / "results" / "results.json").read_text())
        assert data["gradable"] is True and data["score"] == 1.0, data.get("message")
        assert_root_only_writes(root / "results")
        assert stat.S_IMODE((root / "serverFilesCourse").stat().st_mode) == 0o700
    assert_every_attempt_failed(drop, targets)

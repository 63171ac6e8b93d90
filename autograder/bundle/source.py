"""Shipping this package inside a bundle: its source is copied at export time, so the bundle grades with
exactly the grader that exported it, and zipped deterministically with the scripts marked executable.

The references (the answers) travel beside the package, never inside it: the bundle's grader finds them
through AUTOGRADER_REFERENCES, and a student's code, which sees only the installed package, cannot.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from ..feedback.wording import say
from ..reference_store import ENV as REFERENCES_ENV
from ..reference_store import references_dir
from ..settings import TORCH_CHECKED

PACKAGE_DIR = Path(__file__).resolve().parent.parent
"""autograder/, found without importing the package (whose check() would import torch)."""
CHECKOUT = PACKAGE_DIR.parent
SOURCE_FILES = ("pyproject.toml", "setup.py", "README.md")  # pyproject's `readme` must exist for pip to build
TORCH_PIN = f"torch=={TORCH_CHECKED}"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's documented index of CPU-only wheels: without it pip pulls a CUDA build of several GB."""
_ZIP_DATE = (2024, 1, 1, 0, 0, 0)  # fixed: the same grader exports the same bytes
EXECUTABLE = 0o755


class ExportError(Exception):
    """The export cannot be made (no source checkout, bad option); the message says why."""


def copy_source(dest: Path) -> Path:
    """Copies the `autograder` package, pyproject.toml, setup.py (which compiles the translations) and README.md
    into `dest` (pip-installable)."""
    missing = [name for name in SOURCE_FILES if not (CHECKOUT / name).is_file()]
    if missing:
        raise ExportError(say("platforms: export needs a checkout", missing=", ".join(missing), package=PACKAGE_DIR))
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PACKAGE_DIR, dest / "autograder", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    for name in SOURCE_FILES:
        shutil.copy2(CHECKOUT / name, dest / name)
    return dest


def copy_references(dest: Path, exercises: tuple[str, ...]) -> Path:
    """Copies the references of these exercises (and references/README.md) to `dest`, which must be outside
    the installed package: a bundle carries the answers it grades with, and no others."""
    folder = references_dir()
    if folder is None or not folder.is_dir():
        raise ExportError(say("platforms: export needs references", package=PACKAGE_DIR, env=REFERENCES_ENV))
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("README.md", *(f"{e}.py" for e in exercises)):
        if (folder / name).is_file():
            shutil.copy2(folder / name, dest / name)
        elif name != "README.md":
            raise ExportError(say("platforms: export reference missing", path=folder / name, exercise=name[:-3]))
    return dest


def write_text(path: Path, text: str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
    if executable:
        path.chmod(EXECUTABLE)


def zip_folder(folder: Path, target: Path) -> Path:
    """Zips the contents of `folder` (not the folder itself) with fixed dates and the files' modes."""
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=_ZIP_DATE)
            info.external_attr = ((EXECUTABLE if path.stat().st_mode & 0o111 else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    tmp.replace(target)
    return target

"""The course's exercise ids in course order, read from the exercise modules' source text, so that what must
start before torch is imported (the workshop's server, a platform's grader, which starts its worker first)
accepts only real exercise ids without importing torch (which the exercise specs need)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

EXERCISES_DIR = Path(__file__).resolve().parent / "exercises"


@lru_cache(maxsize=1)
def exercise_ids() -> tuple[str, ...]:
    found = []
    for path in EXERCISES_DIR.glob("*.py"):
        if path.name.startswith("_"):
            continue
        text = path.read_text(encoding="utf-8")
        ident = re.search(r"""\bid\s*=\s*["']([a-z][a-z0-9_]*)["']""", text)
        number = re.search(r"\bnumber\s*=\s*(\d+)", text)
        if ident:
            found.append((int(number.group(1)) if number else 999, ident.group(1)))
    return tuple(ident for _, ident in sorted(found))

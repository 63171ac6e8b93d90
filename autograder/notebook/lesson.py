"""What the book's chapters run beside their experiments: the check of an end-of-chapter question's answer,
`glue` for a measured number in a sentence, `reveal` for a fix shown only after its exercise, and the bytes
of tensors alive, sampled after every aten op.

In the package, not beside the chapters, so that a chapter downloaded from the book runs wherever the
course is installed. Nothing here is imported by `import autograder`.
"""

from __future__ import annotations

import textwrap
import weakref
from collections.abc import Callable
from typing import Any

from .predict import CellRun, Prediction, feedback, marks


def check_answer(program: Callable[[], Any], **answer: Any) -> str:
    """Run `program` and judge `answer` (the parts of `predict(...)`) against what it did, as
    `predict.reveal()` judges a learner's guess. Every part given must be judged right; returns what
    `reveal()` would print for that answer. The book asserts its own answers with this."""
    try:
        program()
    except Exception as error:  # noqa: BLE001 - what the program raised is what is judged
        outcome = CellRun.of(error)
    else:
        outcome = CellRun()
    prediction = Prediction(**answer)
    judged = {m.part: m for m in marks(prediction, outcome)}
    problems = [f"{part}: {judged[part].text}" if part in judged else f"{part}: not judged for this outcome"
                for part, value in answer.items() if value is not None and getattr(judged.get(part), "right", None)
                is not True]
    if problems:
        raise AssertionError(f"the book's answer is wrong ({outcome.error}: {outcome.message[:300]}): {problems}")
    return feedback(prediction, outcome)


def glue(key: str, value: Any) -> None:
    """Hand `value` to the page under `key` ({glue:text}`key` in the prose, `{glue:md}` in a block), so that
    a number in a sentence is the number measured when the page was built. Outside the book's build (a
    downloaded chapter, where myst_nb is not installed) there is no page to hand it to: nothing happens."""
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(key, value, display=False)


def reveal(key: str, source: str, namespace: dict) -> None:
    """Run `source` (a fix, with the asserts that prove it) in the page's `namespace`, then glue its text
    under `key` for a collapsed block (`{dropdown}` with `{glue:md}`): what the reader unfolds is exactly the
    code that ran, and passed, when the page was built."""
    from IPython.display import Markdown

    source = textwrap.dedent(source).strip()
    exec(compile(source, f"<{key}>", "exec"), namespace)  # noqa: S102 - the page's own code
    glue(key, Markdown(f"```python\n{source}\n```"))


class LiveBytes:
    """Bytes of the tensors alive that ops run inside the context made, sampled after every aten op.

    A storage counts from the op that made it to the moment it is freed: tensors autograd saved stay
    counted as long as the graph holds them. It counts tensors, not what the C allocator keeps, so a
    one-time allocation (the first matrix multiply's workspace) does not show, and the first run measures
    the same as the next. Views and in-place results share a storage already counted, or made before.
    """

    _seen: set[int]
    """The storages counted (by address), from __enter__ on."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self.ops: list[str] = []
        self._live = 0
        self._mode: Any = None

    def _count(self, tensor: Any, inputs: set[int]) -> None:
        storage = tensor.untyped_storage()
        if storage._cdata in inputs or storage._cdata in self._seen:
            return
        size = storage.nbytes()
        self._seen.add(storage._cdata)
        self._live += size

        def freed(key: int = storage._cdata, size: int = size) -> None:
            self._seen.discard(key)
            self._live -= size

        weakref.finalize(storage, freed)

    def __enter__(self) -> LiveBytes:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_leaves

        timeline, self._seen = self, set()

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                inputs = {t.untyped_storage()._cdata for t in tree_leaves((args, kwargs or {}))
                          if isinstance(t, torch.Tensor)}
                for t in tree_leaves(out):
                    if isinstance(t, torch.Tensor):
                        timeline._count(t, inputs)
                timeline.samples.append(timeline._live)
                timeline.ops.append(func.__name__)
                return out

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._mode.__exit__(*exc)

    @property
    def peak(self) -> int:
        return max(self.samples, default=0)

"""`inplace=True`: where the argument sits, and where the module that has it is built.

`F.dropout(h, inplace=True)` is fixed on its line; `nn.ReLU(inplace=True)` where the module is built, not
where it is called. The locator names the line that *called* the module (`x = self.activ(x)`); the rewrite
belongs to the line that built it (`self.activ = nn.ReLU(inplace=True)`, often in `__init__`), or to a line
that switched `inplace` on afterwards (`m.inplace = True`). Candidates are searched in the files of the
write's frames and of the save's, best first: built under the name the culprit line calls, in the same
class, nearer.
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from ...feedback.wording import say
from .cst_edit import Source, names_read, parsed, plain_code, walk
from .culprit import Culprit, Read, Rewrite

MAX_CANDIDATES = 6

_FUNCTION_TO_MODULES = {"relu": {"ReLU"}, "relu6": {"ReLU6"}, "hardtanh": {"Hardtanh", "ReLU6"},
                        "leaky_relu": {"LeakyReLU"}, "elu": {"ELU"}, "celu": {"CELU"}, "selu": {"SELU"},
                        "silu": {"SiLU"}, "mish": {"Mish"}, "hardswish": {"Hardswish"},
                        "hardsigmoid": {"Hardsigmoid"}, "threshold": {"Threshold"}, "rrelu": {"RReLU"},
                        "dropout": {"Dropout"}, "dropout1d": {"Dropout1d"}, "dropout2d": {"Dropout2d"},
                        "dropout3d": {"Dropout3d"}, "alpha_dropout": {"AlphaDropout"},
                        "feature_alpha_dropout": {"FeatureAlphaDropout"}}
"""The functional op the locator sees -> the modules whose forward calls it."""


def module_ops(op: str) -> set[str]:
    return _FUNCTION_TO_MODULES.get(op.rsplit(".", 1)[-1].removesuffix("_"), set())


INPLACE_POSITION = {
    "ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Hardswish": 0, "Hardsigmoid": 0, "Mish": 0, "LeakyReLU": 1,
    "ELU": 1, "CELU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "AlphaDropout": 1,
    "FeatureAlphaDropout": 1, "Hardtanh": 2, "Threshold": 2, "RReLU": 2,
    "relu": 1, "relu6": 1, "selu": 1, "silu": 1, "hardswish": 1, "hardsigmoid": 1, "mish": 1, "leaky_relu": 2,
    "elu": 2, "celu": 2, "dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3, "alpha_dropout": 3,
    "feature_alpha_dropout": 3, "hardtanh": 3, "threshold": 3, "rrelu": 4}
"""Modules and functions that take `inplace`, and its place among their positional arguments."""


def inplace_argument(call: cst.Call) -> cst.Arg | None:
    """The argument that sets `inplace=True` (by keyword or by position), or None."""
    name = callee_name(call)
    if name not in INPLACE_POSITION:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return arg if _is_true(arg.value) else None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    position = INPLACE_POSITION[name]
    if len(positional) > position and _is_true(positional[position].value):
        return positional[position]
    return None


def drop_inplace(c: Culprit, src: Source, call: cst.Call, file: str | None = None, where: str = "") -> Rewrite:
    """`nn.ReLU(inplace=True)` -> `nn.ReLU()`: the same values, in a new tensor."""
    arg = inplace_argument(call)
    new = without_argument(call, arg) if arg is not None else call
    name = callee_name(call)
    return Rewrite("not_inplace", file or c.file, src.edited({call: new}),
                   say("blame: why not inplace", module=name, where=where, saved=c.saved(), new=plain_code(new)),
                   contract="out_of_place")


def without_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = [a for a in call.args if a is not arg]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def construction_rewrites(c: Culprit, read: Read) -> list[Rewrite]:
    """Each `Module(..., inplace=True)` of the culprit's kind (and each `x.inplace = True`), as a rewrite."""
    modules = module_ops(c.op)
    if not modules:
        return []
    scored = []
    files = list(dict.fromkeys([f for f, _ in c.chain] + [c.file] + [f for f, _ in c.saver_chain]))
    for rank, file in enumerate(files):
        text = read(file)
        if text is None:
            continue
        try:
            src = parsed(text)
        except Exception:  # noqa: BLE001 - unparsable: nothing to rewrite there
            continue
        called, klass = _called_names(src, c.line) if file == c.file else (set(), None)
        for node, rewrite in _candidates(c, src, file, modules):
            assigned = _assigned_to(src, node)
            score = (assigned in called, klass is not None and klass in src.enclosing(node, (cst.ClassDef,)), -rank,
                     -abs(src.line_of(node) - c.line))
            scored.append((score, rewrite))
    scored.sort(key=lambda s: s[0], reverse=True)
    found = [r for _, r in scored[:MAX_CANDIDATES]]
    return found + _all_of_them(c, read, modules, found)


def _candidates(c: Culprit, src: Source, file: str, modules: set[str]) -> list[tuple[cst.CSTNode, Rewrite]]:
    found = []
    for call in src.nodes(cst.Call):
        if callee_name(call) in modules and inplace_argument(call) is not None:
            where = say("blame: built and called at", built=c.at(src.line_of(call)), called=c.at(c.line))
            found.append((call, drop_inplace(c, src, call, file, where)))
    for assign in src.nodes(cst.Assign):
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if (isinstance(target, cst.Attribute) and target.attr.value == "inplace"
                and isinstance(assign.value, cst.Name) and assign.value.value == "True"):
            new = assign.with_changes(value=cst.Name("False"))
            why = say("blame: why inplace attribute", assign=plain_code(assign), line=c.at(src.line_of(assign)),
                      called=c.at(c.line), saved=c.saved())
            found.append((assign, Rewrite("not_inplace", file, src.edited({assign: new}), why, "out_of_place")))
    return found


def _all_of_them(c: Culprit, read: Read, modules: set[str], tried: list[Rewrite]) -> list[Rewrite]:
    """When several modules are built in-place in the culprit's file: all of them at once, as a last try."""
    text = read(c.file)
    if text is None or sum(r.file == c.file for r in tried) < 2:
        return []
    src = parsed(text)
    calls = [call for call, r in _candidates(c, src, c.file, modules) if isinstance(call, cst.Call)]
    if len(calls) < 2:
        return []
    new: dict[cst.CSTNode, cst.CSTNode] = {}
    for call in calls:
        arg = inplace_argument(call)
        assert arg is not None  # _candidates keeps only the calls that have one
        new[call] = without_argument(call, arg)
    return [Rewrite("not_inplace", c.file, src.edited(new),
                    say("blame: why every inplace module", file=c.file, saved=c.saved()),
                    "out_of_place")]


def _called_names(src: Source, line: int) -> tuple[set[str], cst.ClassDef | None]:
    """What the culprit line calls (`self.activ`, `act`), and the class it is in."""
    stmt = src.statement_at(line)
    if stmt is None:
        return set(), None
    calls = {plain_code(call.func) for call in walk(stmt, cst.Call)}
    classes = src.enclosing(stmt, (cst.ClassDef,))
    return calls & names_read(stmt), cast(cst.ClassDef, classes[0]) if classes else None


def _assigned_to(src: Source, node: cst.CSTNode) -> str | None:
    """`self.activ` for the call in `self.activ = nn.ReLU(inplace=True)`."""
    parent = src.parents.get(node)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return plain_code(parent.targets[0].target)
    return None


def callee_name(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    if isinstance(call.func, cst.Name):
        return call.func.value
    return None


def _is_true(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"

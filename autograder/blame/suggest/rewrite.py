"""From a culprit to candidate rewrites of the code: which edit undoes which kind of in-place write, and why.

Pure code on source text (libcst, see cst_edit.py): no torch, no running. Each rule returns `Rewrite`s in the
order they are worth trying; `autograder blame --fix` keeps the first one that re-running verifies, and the
text shown without --fix is the first. A rule that cannot be sure of the maths still proposes its rewrite:
verification, not the rule, decides what is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst

from ...feedback.wording import say
from .construct import callee_name, drop_inplace, inplace_argument, without_argument
from .cst_edit import Source, names_read, parsed, plain_code, statement, walk
from .culprit import Culprit, Read, Rewrite

OUT_OF_PLACE = frozenset(
    "abs acos add addbmm addcdiv addcmul addmm addmv addr asin atan baddbmm bitwise_and bitwise_or ceil clamp "
    "clamp_max clamp_min clip cos cosh div erf exp expm1 floor floor_divide fmod frac hardtanh index_add "
    "index_copy index_fill index_put leaky_relu lerp log log1p logit masked_fill masked_scatter mul nan_to_num "
    "neg pow reciprocal relu remainder renorm round rsqrt scatter scatter_add scatter_reduce sigmoid sign sin "
    "sinh sqrt square squeeze sub t tan tanh threshold transpose tril triu true_divide trunc unsqueeze".split())
"""In-place methods `x_` whose out-of-place twin `x` takes the same arguments (on `torch.Tensor`; `hardtanh`,
`leaky_relu` and `threshold` in `torch.nn.functional`)."""

_AUG_TO_BINARY: dict[type[cst.BaseAugOp], Callable[[], cst.BaseBinaryOp]] = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo, cst.PowerAssign: cst.Power,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply, cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift}


def write_rewrites(c: Culprit, src: Source, stmt: cst.SimpleStatementLine) -> list[Rewrite]:
    """Rewrites of the statement that wrote into the saved tensor, most specific first."""
    found: list[Rewrite] = []
    for small in stmt.body:
        if isinstance(small, cst.AugAssign):
            found += _aug_assign(c, src, stmt, small)
        elif isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Subscript) for t in small.targets):
            target = next(t.target for t in small.targets if isinstance(t.target, cst.Subscript))
            if not _reads_what_it_writes(c, small, _base(target)):
                found += _clone_first(c, src, stmt, _base(target), plain_code(small))
        else:
            found += _calls(c, src, stmt, small)
    return found


def clone_saved(c: Culprit, read: Read) -> list[Rewrite]:
    """A copy of the saved tensor where the saving line makes or reads it, so that the write, wherever it is
    made (a view, `detach()`, a helper it is passed to, a cache written later), lands elsewhere than what
    backward reads. An output the op saved (`relu`, `sigmoid`): `t = t.clone()` right after the line, or
    `.clone()` on the saving call. An input it saved (`linear`, `mul`, `gelu`): `.clone()` where the line reads
    it (`lin(cache.clone())`). Where the report does not say which (`saved_as` unknown), both, output first."""
    text = read(c.saved_file) if c.saved_file and c.saved_line else None
    if text is None:
        return []
    try:
        src = parsed(text)
    except Exception:  # noqa: BLE001 - unparsable file: no rewrite, the words remain
        return []
    stmt = src.statement_at(c.saved_line or 0)
    small = stmt.body[0] if stmt is not None and len(stmt.body) == 1 else None
    if stmt is None or not isinstance(small, (cst.Assign, cst.AugAssign, cst.Expr)):
        return []
    made = [] if c.saved_as == "input" else _clone_made(c, src, stmt, small)
    read_at = [] if c.saved_as == "output" else _clone_read(c, src, stmt, small, read)
    return made + read_at


def _clone_made(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, small: cst.BaseSmallStatement) -> list[Rewrite]:
    assign = small if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
    target = assign.targets[0].target if assign is not None else None
    if assign is not None and isinstance(target, (cst.Name, cst.Attribute)) and isinstance(assign.value, cst.Call):
        name = plain_code(target)
        copy = statement(f"{name} = {name}.clone()\n")
        why = say("blame: why clone the output", code=src.code(small).strip(), copy=name)
        return [Rewrite("clone_saved", c.saved_file or "", src.edited({stmt: cst.FlattenSentinel([stmt, copy])}), why)]
    saver = (c.saved_op or "").rsplit(".", 1)[-1]
    calls = [call for call in walk(small, cst.Call) if saver and callee_name(call) == saver]
    if not calls:
        return []
    cloned = cst.Call(func=cst.Attribute(value=calls[0], attr=cst.Name("clone")))
    why = say("blame: why clone the made tensor", made=plain_code(calls[0]), cloned=plain_code(cloned))
    return [Rewrite("clone_saved", c.saved_file or "", src.edited({calls[0]: cloned}), why)]


def _clone_read(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, small: cst.BaseSmallStatement,
                read: Read) -> list[Rewrite]:
    """`.clone()` on the tensor the saving line reads and the culprit writes: found by name, the name the
    culprit's statement writes through or one its callers' lines pass (`update(self.cache, out)`)."""
    value = small.value if isinstance(small, (cst.Assign, cst.AugAssign, cst.Expr)) else None
    if value is None:
        return []
    reads = _tensor_reads(value)
    written = _culprit_names(c, read)
    chosen = [code for code in reads if code in written or _slice_of(reads[code][0]) in written]
    if not chosen and c.saved_as == "input" and len(reads) == 1:
        chosen = list(reads)
    found = []
    for code in chosen[:MAX_READS]:
        nodes = reads[code]
        new: dict[cst.CSTNode, cst.CSTNode] = {
            n: cst.Call(func=cst.Attribute(value=n, attr=cst.Name("clone"))) for n in nodes}
        why = say("blame: why clone the read", saver=src.code(small).strip(), line=c.at(c.saved_line), code=code,
                  method=c.method)
        found.append(Rewrite("clone_saved", c.saved_file or "", src.edited(new), why))
    return found


MAX_READS = 3
"""Names tried for a copy at the saving line's read."""


def _tensor_reads(value: cst.BaseExpression) -> dict[str, list[cst.BaseExpression]]:
    """The names and attribute chains a saving expression reads as data: call arguments, operands, the
    object of a method call or a subscript (`q @ self.k.transpose(-1, -2)` reads `q` and `self.k`), by code."""
    found: dict[str, list[cst.BaseExpression]] = {}
    slices: dict[str, list[cst.BaseExpression]] = {}
    for node in walk(value, (cst.Call, cst.BinaryOperation, cst.Subscript, cst.UnaryOperation)):
        if isinstance(node, cst.Call):
            parts = [a.value for a in node.args]
            if isinstance(node.func, cst.Attribute):
                parts.append(node.func.value)  # `x` in `x.transpose(1, 2)`; a module's layer is no name read
        elif isinstance(node, cst.BinaryOperation):
            parts = [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            parts = [node.expression]
        else:
            parts = [node.value]
        for part in parts:
            if isinstance(part, (cst.Name, cst.Attribute)) and _may_be_tensor(part):
                found.setdefault(plain_code(part), []).append(part)
            elif _slice_of(part) is not None and _may_be_tensor(_base(part)):
                slices.setdefault(plain_code(part), []).append(part)
    # a slice read (`T[b][t]` in `T[b][t] = conv(T[b][t])`) is copied before the whole tensor: it copies less
    return {**slices, **found}


def _slice_of(node: cst.BaseExpression) -> str | None:
    """`T` for the outermost subscript `T[b][t]` of a name or an attribute chain; None for anything else."""
    base = _base(node)
    return plain_code(base) if isinstance(node, cst.Subscript) and isinstance(base, (cst.Name, cst.Attribute)) else None


_NOT_DATA = frozenset({"self", "torch", "F", "nn", "np", "math", "functional", "cls"})


def _may_be_tensor(node: cst.BaseExpression) -> bool:
    """Whether a name may hold a tensor: not `self`, not a module (`torch`, `F`, `nn`)."""
    code = plain_code(node)
    return code not in _NOT_DATA and not code.startswith(("torch.", "F.", "nn."))


def _culprit_names(c: Culprit, read: Read) -> set[str]:
    """The names the culprit's statement and its callers' statements read or write."""
    names: set[str] = set()
    for file, line in (*c.chain[:4], (c.file, c.line)):
        text = read(file)
        try:
            stmt = parsed(text).statement_at(line) if text is not None else None
        except Exception:  # noqa: BLE001 - an unparsable file: no names from it
            stmt = None
        if stmt is not None:
            names |= names_read(stmt)
    return names


# -- the statement shapes ---------------------------------------------------------------------------------
def _aug_assign(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, small: cst.AugAssign) -> list[Rewrite]:
    binary = _AUG_TO_BINARY.get(type(small.operator))
    if binary is None:
        return []
    value = small.value
    if isinstance(value, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # keep the order of evaluation
    new = cst.Assign(targets=[cst.AssignTarget(target=small.target)],
                     value=cst.BinaryOperation(left=small.target.deep_clone(), operator=binary(), right=value))
    before, after = plain_code(small), plain_code(new)
    expand = Rewrite("expand", c.file, src.edited({small: new}),
                     say("blame: why expand", before=before, saved=c.saved(), after=after), contract="out_of_place")
    if not isinstance(small.target, cst.Subscript):
        return [expand]
    copy = _clone_first(c, src, stmt, _base(small.target), before)
    # `x[i] += v` on a tensor also writes with __setitem__; on a list, the element is replaced and only += writes
    return copy + [expand] if any(op.endswith("__setitem__") for op in c.ops_on_line) else [expand] + copy


def _calls(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, small: cst.BaseSmallStatement) -> list[Rewrite]:
    found: list[Rewrite] = []
    for call in walk(small, cst.Call):
        name = callee_name(call)
        if name is None:
            continue
        if name == c.method and name.endswith("_"):
            found += _inplace_call(c, src, stmt, small, call)
        elif any(a.keyword is not None and a.keyword.value == "out" for a in call.args) and name == c.method:
            found += _out_argument(c, src, small, call)
        elif inplace_argument(call) is not None:
            found += [drop_inplace(c, src, call)]
    return found


def _inplace_call(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, small: cst.BaseSmallStatement,
                  call: cst.Call) -> list[Rewrite]:
    """`r.x_(...)` (a method) or `F.x_(r, ...)` (a function): the out-of-place twin, or a copy first."""
    method = isinstance(call.func, cst.Attribute) and c.op.startswith("torch.Tensor.")
    receiver = call.func.value if method and isinstance(call.func, cst.Attribute) else (
        call.args[0].value if call.args else None)
    twin = _twin(call)
    found = []
    alone = isinstance(small, cst.Expr) and small.value is call
    behind = _behind_autograd(receiver)
    if twin is not None and alone and behind is not None and isinstance(call.func, cst.Attribute):
        new = cst.Assign(targets=[cst.AssignTarget(target=behind)],
                         value=twin.with_changes(func=twin.func.with_changes(value=behind)))
        found.append(Rewrite("out_of_place", c.file, src.edited({small: new}),
                             say("blame: why not behind autograd", call=plain_code(call), behind=plain_code(behind),
                                 new=plain_code(new))))
    named = isinstance(receiver, (cst.Name, cst.Attribute)) and behind is None
    if twin is not None and alone and named:
        # named: the receiver is a Name or an Attribute
        new = cst.Assign(targets=[cst.AssignTarget(target=cast("cst.Name | cst.Attribute", receiver))], value=twin)
        found.append(Rewrite("out_of_place", c.file, src.edited({small: new}),
                             say("blame: why out of place", call=plain_code(call), saved=c.saved(),
                                 new=plain_code(new))))
    elif twin is not None and not alone:
        found.append(Rewrite("out_of_place", c.file, src.edited({call: twin}),
                             say("blame: why twin", call=plain_code(call), saved=c.saved(), twin=plain_code(twin),
                                 receiver=plain_code(receiver) if receiver else say("blame: its input")),
                             contract="out_of_place"))
    if named:
        copy = _clone_first(c, src, stmt, receiver, plain_code(call))
        found = copy + found if not alone else found + copy  # nested: the copy keeps what the line meant
    return found


def _behind_autograd(receiver: cst.BaseExpression | None) -> cst.Name | cst.Attribute | None:
    """`x` for `x.detach()` and `x.data`: a name the write reaches behind autograd's back."""
    if isinstance(receiver, cst.Call) and not receiver.args and isinstance(receiver.func, cst.Attribute) and (
            receiver.func.attr.value == "detach" and isinstance(receiver.func.value, (cst.Name, cst.Attribute))):
        return receiver.func.value
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data" and isinstance(
            receiver.value, (cst.Name, cst.Attribute)):
        return receiver.value
    return None


def _twin(call: cst.Call) -> cst.Call | None:
    base = (callee_name(call) or "")[:-1]  # zero_, fill_, copy_: no twin keeps the graph; they write into a copy
    if base not in OUT_OF_PLACE or not isinstance(call.func, (cst.Attribute, cst.Name)):
        return None
    func = (call.func.with_changes(attr=cst.Name(base)) if isinstance(call.func, cst.Attribute)
            else cst.Name(base))
    return call.with_changes(func=func)


def _out_argument(c: Culprit, src: Source, small: cst.BaseSmallStatement, call: cst.Call) -> list[Rewrite]:
    """`torch.mul(a, b, out=t)` -> `t = torch.mul(a, b)`: a new tensor instead of a write into `t`."""
    out = next(a for a in call.args if a.keyword is not None and a.keyword.value == "out")
    if not (isinstance(small, cst.Expr) and small.value is call and isinstance(out.value, (cst.Name, cst.Attribute))):
        return []
    new = cst.Assign(targets=[cst.AssignTarget(target=out.value)], value=without_argument(call, out))
    return [Rewrite("out_of_place", c.file, src.edited({small: new}),
                    say("blame: why no out", out=plain_code(out.value), saved=c.saved(), new=plain_code(new)))]


def _clone_first(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, base: cst.BaseExpression | None,
                 write: str) -> list[Rewrite]:
    if not isinstance(base, (cst.Name, cst.Attribute)):
        return []
    name = plain_code(base)
    copy = statement(f"{name} = {name}.clone()\n").with_changes(leading_lines=stmt.leading_lines)
    edited = src.edited({stmt: cst.FlattenSentinel([copy, stmt.with_changes(leading_lines=())])})
    return [Rewrite("clone_first", c.file, edited,
                    say("blame: why clone first", copy=name, write=write, saved=c.saved()))]


def _reads_what_it_writes(c: Culprit, small: cst.Assign, base: cst.BaseExpression) -> bool:
    """`T[b][t] = conv(T[b][t])`, the statement that saved the tensor: a copy of `T` put before it would be read,
    saved and written by the same statement, and the error would stay. The copy goes where it reads."""
    return c.saved_line == c.line and plain_code(base) in names_read(small.value)


def written_name(stmt: cst.SimpleStatementLine) -> str | None:
    """The name a statement writes through: `h` in `h += 1`, `x` in `x[0] = 0`, `t` in `t.mul_(2)`."""
    small = stmt.body[0] if len(stmt.body) == 1 else None
    target: cst.BaseExpression | None
    if isinstance(small, cst.AugAssign):
        target = _base(small.target)
    elif isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Subscript):
        target = _base(small.targets[0].target)
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        out = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "out"]
        method = call.func if isinstance(call.func, cst.Attribute) and call.func.attr.value.endswith("_") else None
        target = out[0] if out else method.value if method is not None else None
    else:
        return None
    return plain_code(target) if isinstance(target, (cst.Name, cst.Attribute)) else None


# -- helpers ------------------------------------------------------------------------------------------------
def _base(target: cst.BaseExpression) -> cst.BaseExpression:
    """`x` for `x[:, i]`, `self.buf` for `self.buf[0][1]`."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return target

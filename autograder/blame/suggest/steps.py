"""When the culprit is an optimizer step: a state carried across steps is detached; a later backward is kept
to the parameters the next optimizer steps; otherwise, words.

`opt.step()` writes into parameters that an older graph saved. Two programs do that:
- a recurrent state (`out, h = rnn(x, h)`) carries the previous step's graph into the next backward, which
  `retain_graph=True` let through: detach the state at the start of each step (truncated backpropagation
  through time). The rewrite promises the "truncated" contract (verify.py), not the same gradients.
- two backward passes through one graph with a step between them (GANs, two losses). When another
  optimizer steps after the later backward (`opt_G.step()` after `G_loss.backward()`), that backward need
  only reach its parameters: `inputs=list(G.parameters())` is added to it, with the step where it is
  (`restrict_backward`), then, for when the path to them still goes through the stepped parameters, with
  the step moved after that backward (`move_step`), where it still sees only the gradients it saw before.
  Both mean to keep what each step uses; what they change is the `.grad` of the other parameters, which
  that backward no longer adds to: they are kept only if re-running shows the same gradients at every
  step and the same final values (verify.py). With one optimizer (both losses train the same parameters)
  no rewrite keeps the maths: moving the step, or running the forward again after it, are different
  trainings, and the words say which is which.
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from ...feedback.wording import say
from .cst_edit import Source, expression, names_read, parsed, plain_code, statement, walk
from .culprit import Culprit, Read, Rewrite


def is_step(code: str | None) -> bool:
    return code is not None and ".step(" in code


def step_words(c: Culprit, step: str, later: tuple[str, int] | None) -> str:
    """A state carried from an earlier pass: detach it. Otherwise which two fixes, and why neither is automatic."""
    if c.line_ran_again and later is None:  # a later backward in the same block: two losses, not a carried state
        saver = (say("blame: code at line", code=c.saved_code, line=c.at(c.saved_line))
                 if c.saved_code and c.saved_line else say("blame: the line that saved it"))
        return say("blame: words step, carried state", step=step, saver=saver)
    later_text = (say("blame: code at line", code=later[0], line=c.at(later[1])) if later
                  else say("blame: a later backward"))
    forward = (say("blame: the forward", code=c.saved_code, line=c.at(c.saved_line))
               if c.saved_code and c.saved_line else "")
    return say("blame: words step", step=step, later=later_text, forward=forward)


def later_backward(src: Source, step: cst.SimpleStatementLine) -> tuple[str, int] | None:
    """(code, line) of the next statement of the step's block that calls `.backward(`."""
    found = _next_backward(src, step)
    return (_code(found[0].body[found[2]]), src.line_of(found[0].body[found[2]])) if found else None


def later_backward_of(c: Culprit, src: Source, step: cst.SimpleStatementLine) -> tuple[str, int] | None:
    """`later_backward` from where the step is made for the training loop (a helper's caller: `step_site`)."""
    return later_backward(src, step_site(c, src, step)[0])


def _next_backward(src: Source,
                   step: cst.SimpleStatementLine) -> tuple[cst.IndentedBlock | cst.Module, int, int] | None:
    """(the step's block, the step's place in it, the place of the next statement calling `.backward(`)."""
    block = src.parents.get(step)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    at = next(i for i, node in enumerate(block.body) if node is step)
    later = next((i for i in range(at + 1, len(block.body)) if ".backward(" in src.code(block.body[i])), None)
    return (block, at, later) if later is not None else None


def step_rewrites(c: Culprit, src: Source, stmt: cst.SimpleStatementLine, read: Read) -> list[Rewrite]:
    at, own = step_site(c, src, stmt)
    restrict = _restrict(c, src, at, own)
    if at is not stmt and restrict:
        return restrict  # a step inside a helper, between a loss's forward and its backward: no state is carried
    detach = _detach_state(c, src, stmt, read) or (_detach_from_line(c, src, stmt) if c.line_ran_again else [])
    return detach + restrict


def step_site(c: Culprit, src: Source,
              stmt: cst.SimpleStatementLine) -> tuple[cst.SimpleStatementLine, str | None]:
    """(the statement of the training code that makes the step, the optimizer that steps). A step is known by what
    it writes, an optimizer's parameters, wherever it is called from: `opt_c.step()` inside `update_critic(...)`
    is made, for the loop, by the call `update_critic(...)`, the statement a later backward follows."""
    own = _stepper(stmt)
    if _next_backward(src, stmt) is not None:
        return stmt, own
    for file, line in c.chain[1:4]:
        if file != c.file:
            break
        caller = src.statement_at(line)
        if caller is not None and caller is not stmt and _next_backward(src, caller) is not None:
            return caller, own
    return stmt, own


def _detach_from_line(c: Culprit, src: Source, step: cst.SimpleStatementLine) -> list[Rewrite]:
    """When the loop is not in view (the grader has the two lines alone) but the saving line ran again since it
    saved the tensor: the state it reads is detached just before it, a tensor or a tuple alike."""
    if c.saved_file != c.file or c.saved_line is None:
        return []
    carrier = src.statement_at(c.saved_line)
    state = _state_read(carrier)
    if carrier is None or state is None:
        return []
    form = f"{state} = {state}.detach() if hasattr({state}, 'detach') else tuple(s.detach() for s in {state})\n"
    why = say("blame: why detach the carried state", state=state, step=_code(step))
    return [Rewrite("detach_state", c.file, src.edited({carrier: cst.FlattenSentinel(
        [statement(form).with_changes(leading_lines=carrier.leading_lines), carrier.with_changes(leading_lines=())])}),
        why, contract="truncated")]


_STATE_NAMES = frozenset({"h", "c", "hx", "cx", "hc", "s"})
_STATE_WORDS = ("h_", "c_", "hid", "state", "mem", "carry")


def _state_read(stmt: cst.SimpleStatementLine | None) -> str | None:
    """The state a saving call reads: a name it reads and also assigns (`out, h = rnn(x, h)`), else its last
    positional argument named like a state (`h_cur`, `hidden`, `state`)."""
    small = stmt.body[0] if stmt is not None and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Call):
        return None
    args = [a.value for a in small.value.args if a.keyword is None and not a.star]
    names = [plain_code(a) for a in args if isinstance(a, (cst.Name, cst.Attribute))]
    assigned = {name for t in small.targets for name in _flat_targets(t.target)}
    both = [n for n in names if n in assigned]
    if both:
        return both[-1]
    stateful = [n for n in names[1:] if (n.rsplit(".", 1)[-1].lower() in _STATE_NAMES
                                         or n.rsplit(".", 1)[-1].lower().startswith(_STATE_WORDS))]
    return stateful[-1] if stateful else None


def _detach_state(c: Culprit, src: Source, step: cst.SimpleStatementLine, read: Read) -> list[Rewrite]:
    """`h = h.detach()` before the statement that carries `h` from one step into the next."""
    for file, line in c.saver_chain:
        text = src.text if file == c.file else read(file)
        if text is None:
            continue
        here = src if file == c.file else parsed(text)
        carrier = here.statement_at(line)
        state = _carried(here, carrier)
        if carrier is None or not state:
            continue
        anchor = _anchor(here, carrier, step if here is src else None)
        forms = _detach_forms(state, lstm="lstm" in (c.saved_op or "").lower())
        step_code = _code(step)
        why = say("blame: why detach the state", state=", ".join(state), step=step_code)
        return [Rewrite("detach_state", file, here.edited({anchor: cst.FlattenSentinel(
            [statement(form).with_changes(leading_lines=anchor.leading_lines),
             anchor.with_changes(leading_lines=())])}),
            why, contract="truncated") for form in forms]
    return []


def _carried(src: Source, stmt: cst.SimpleStatementLine | None) -> list[str]:
    """The state a statement carries from one step into the next: an attribute it reads that its function
    assigns at or after it (`self.h` in `out, self.h = rnn(x, self.h)`), or a name it reads that its loop
    assigns at or after it and not before (`h` in `for ...: out, h = rnn(x, h)`; not `x` in `x = f(x)`)."""
    small = stmt.body[0] if stmt is not None and len(stmt.body) == 1 else None
    if stmt is None or not isinstance(small, cst.Assign):
        return []
    line = src.line_of(stmt)
    functions = src.enclosing(stmt, (cst.FunctionDef,))
    scope = functions[0] if functions else src.module
    loops = [loop for loop in src.enclosing(stmt, (cst.For, cst.While)) if _inside(src, loop, scope)]
    carried = []
    for name in dict.fromkeys(_read_in_order(small.value)):
        if "." in name:
            if name in _assigned(src, scope, lambda at: at >= line):
                carried.append(name)
        elif loops and name in _assigned(src, loops[0], lambda at: at >= line) and (
                name not in _assigned(src, loops[0], lambda at: at < line)):
            carried.append(name)
    return carried


def _read_in_order(node: cst.CSTNode) -> list[str]:
    return sorted(names_read(node), key=lambda n: plain_code(node).find(n))


def _assigned(src: Source, scope: cst.CSTNode, when) -> set[str]:
    """Targets of the assignments inside `scope` whose line satisfies `when`."""
    found: set[str] = set()
    for kind in (cst.Assign, cst.AugAssign, cst.AnnAssign):
        for node in src.nodes(kind):
            if not when(src.line_of(node)) or not _inside(src, node, scope):
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                found.update(_flat_targets(target))
    return found


def _inside(src: Source, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    return scope is src.module or any(a is scope for a in src.enclosing(node, (type(scope),)))


def _flat_targets(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [name for element in node.elements for name in _flat_targets(element.value)]
    return [plain_code(node)] if isinstance(node, (cst.Name, cst.Attribute)) else []


def _anchor(src: Source, carrier: cst.SimpleStatementLine,
            step: cst.SimpleStatementLine | None) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    """Where the detach goes: before the statement of the training loop's body that holds the carrier (the
    carrier itself, or an inner time loop around it); before the carrier when the step is elsewhere."""
    if step is None:
        return carrier
    step_loops = src.enclosing(step, (cst.For, cst.While))
    node: cst.CSTNode = carrier
    while True:
        parent = src.parents.get(node)
        if parent is None:
            return carrier
        if isinstance(parent, cst.IndentedBlock) and src.parents.get(parent) in step_loops:
            # a statement of a block: a simple statement line or a compound statement (libcst's two statements)
            return cast("cst.SimpleStatementLine | cst.BaseCompoundStatement", node)
        node = parent


def _detach_forms(state: list[str], lstm: bool) -> list[str]:
    if len(state) > 1:
        names = ", ".join(state)
        return [f"{names} = {', '.join(f'{s}.detach()' for s in state)}\n"]
    (s,) = state
    tensor, pair = f"{s} = {s}.detach()\n", f"{s} = tuple(part.detach() for part in {s})\n"
    return [pair, tensor] if lstm else [tensor, pair]


def _restrict(c: Culprit, src: Source, step: cst.SimpleStatementLine, own: str | None) -> list[Rewrite]:
    """The later backward kept, with `inputs=`, to the parameters of the optimizer that steps after it (not the
    culprit's): first with the culprit step where it is, then with the step moved after that backward."""
    found = _next_backward(src, step)
    if found is None:
        return []
    block, at, later = found
    backward = block.body[later]
    call = _backward_call(backward)
    stepper = _next_stepper(src, block, later)
    if call is None or stepper is None or own is None or stepper == own:
        return []
    params = _parameters(src, stepper, backward)
    restricted = call.with_changes(args=_with_inputs(call, expression(params)))
    step_code, backward_code = _code(step), _code(backward)
    rest = say("blame: the other parameters' grad")
    body = list(block.body)
    moved = body[:at] + body[at + 1:later] + [backward.deep_replace(call, restricted), step] + body[later + 1:]
    return [
        Rewrite("restrict_backward", c.file, src.edited({call: restricted}),
                say("blame: why restrict the backward", backward=backward_code, step=step_code, stepper=stepper,
                    params=params, rest=rest)),
        Rewrite("move_step", c.file, src.edited({block: block.with_changes(body=moved)}),
                say("blame: why move the step", step=step_code, backward=backward_code, params=params,
                    stepper=stepper, rest=rest)),
    ]


def _backward_call(stmt: cst.BaseStatement) -> cst.Call | None:
    """The one `.backward(...)` call of a statement, when `inputs` can be added to it."""
    calls = [call for call in walk(stmt, cst.Call)
             if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"]
    if len(calls) != 1:
        return None
    args = calls[0].args
    if any(a.star or (a.keyword is not None and a.keyword.value == "inputs") for a in args):
        return None
    return calls[0] if sum(a.keyword is None for a in args) < 4 else None  # a 4th positional is `inputs`


def _with_inputs(call: cst.Call, value: cst.BaseExpression) -> list[cst.Arg]:
    """The call's arguments and `inputs=value` after them, in the call's own layout."""
    new = cst.Arg(value=value, keyword=cst.Name("inputs"), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if not call.args:
        return [new]
    *first, last = call.args
    if isinstance(last.comma, cst.Comma):  # one argument a line, with a trailing comma: the new one too
        return [*first, last.with_changes(comma=cst.Comma(whitespace_after=call.whitespace_before_args)),
                new.with_changes(comma=last.comma)]
    return [*call.args, new]


def _stepper(stmt: cst.BaseStatement) -> str | None:
    """`opt_G` for `opt_G.step()`."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    call = small.value if isinstance(small, cst.Expr) else None
    if (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "step"):
        return plain_code(call.func.value)
    return None


def _next_stepper(src: Source, block: cst.IndentedBlock | cst.Module, at: int) -> str | None:
    """The optimizer of the first `X.step()` after statement `at` of the block, before any other backward."""
    for stmt in block.body[at + 1:]:
        if _stepper(stmt) is not None:
            return _stepper(stmt)
        if ".backward(" in src.code(stmt):
            return None
    return None


def _parameters(src: Source, optimizer: str, near: cst.CSTNode) -> str:
    """The parameters an optimizer steps, as code: `list(D.parameters())` where it is built once in the file
    from `D.parameters()` (in the same class, for `self.opt`); else read from the optimizer itself."""
    built = [a for a in src.nodes(cst.Assign) if any(plain_code(t.target) == optimizer for t in a.targets)]
    value = built[0].value if len(built) == 1 else None
    first = value.args[0] if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None else None
    module = first.value if first is not None else None
    if (isinstance(module, cst.Call) and not module.args and isinstance(module.func, cst.Attribute)
            and module.func.attr.value == "parameters" and (not optimizer.startswith("self.") or (
                src.enclosing(built[0], (cst.ClassDef,))[:1] == src.enclosing(near, (cst.ClassDef,))[:1]))):
        return f"list({plain_code(module)})"
    return f'[p for group in {optimizer}.param_groups for p in group["params"]]'


def _code(stmt: cst.BaseStatement) -> str:
    """A statement's code without its comment: `opt.step()` for `opt.step()  # culprit`."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return "; ".join(plain_code(s) for s in stmt.body)
    return plain_code(stmt).strip().splitlines()[0]

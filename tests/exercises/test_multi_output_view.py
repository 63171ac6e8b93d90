"""multi_output_view: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/multi_output_view.py, and tests/exercises/test_catalogue.py grades every entry.

What torch 2.13 does, as the exercise and its notebook teach it: an in-place change to an output of `chunk`,
`split` or `unbind` is refused at the write, in the forward pass, with a message of its own (not the version
counter's); under no_grad the write goes through and the next use of any of the views raises."""

import pytest
import torch

from autograder.core.messages import INPLACE_ERROR
from autograder.exercises import get
from autograder.exercises.multi_output_view import ONE_TOKEN
from autograder.reference_store import known_submissions, load_reference
from tests.conftest import failing

ID = "multi_output_view"
KNOWN = known_submissions(ID)
BROKEN, CORRECT, WRONG = KNOWN.broken, KNOWN.correct, KNOWN.wrong

REFUSED = ("Output {i} of {op} is a view and is being modified inplace. This view is the output of a function that "
           "returns multiple views. Such functions do not allow the output views to be modified inplace. You should "
           "replace the inplace operation by an out-of-place one.")
"""torch 2.13's words for the write itself."""
REFUSED_LATER = REFUSED.replace("is being modified inplace", "its base or another view of its base has been modified "
                                "inplace")
"""... and for the next use of a view after a write that ran under no_grad."""


def message(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def recorded():
    """A tensor autograd records, like the output of the block's qkv layer."""
    return torch.randn(2, 5, 24, requires_grad=True) * 1


@pytest.mark.parametrize("op, cut", [
    ("Split", lambda t: t.chunk(3, dim=-1)),
    ("Split", lambda t: t.split(8, dim=-1)),
    ("SplitWithSizes", lambda t: t.split([8, 8, 8], dim=-1)),
    ("Unbind", lambda t: t.reshape(2, 5, 3, 8).unbind(2)),
])
@pytest.mark.parametrize("i", [0, 1, 2])
def test_the_write_itself_raises_with_its_own_message(op, cut, i):
    views = cut(recorded())
    said = message(lambda: views[i].mul_(0.5))
    assert said == REFUSED.format(i=i, op=op)
    assert get(ID).failure.matches("RuntimeError", said)
    assert not INPLACE_ERROR.search(said)  # not the version counter's error: nothing saved was compared
    assert views[i]._version == 0  # refused before anything was written


@pytest.mark.parametrize("used", [0, 1, 2])
def test_under_no_grad_the_write_runs_and_the_next_use_of_any_view_raises(used):
    views = recorded().chunk(3, dim=-1)
    with torch.no_grad():
        views[0].mul_(0.5)
    said = message(lambda: views[used] * 2)
    assert said == REFUSED_LATER.format(i=used, op="Split")
    assert get(ID).failure.matches("RuntimeError", said)


def test_without_recording_the_write_is_allowed():
    q, _, _ = torch.randn(2, 5, 24).chunk(3, dim=-1)
    q *= 0.5
    with torch.no_grad():
        q, _, _ = recorded().chunk(3, dim=-1)
        q *= 0.5


def test_broken_starter_fails_in_forward_at_the_line(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"forward", "backward runs", "gradients", "gradcheck"} <= failing(result)
    forward = next(t.output for t in result.tests if t.name == "forward")
    assert "(`q *= self.scale`)" in forward and REFUSED.format(i=0, op="Split") in forward


def test_scaling_k_is_the_same_math_as_scaling_q():
    """`(s q) . k = q . (s k)`: the catalogue's 'scale k instead' is a correct alternative, in values and gradients."""
    Attention = load_reference(ID)["Attention"]

    class ScaleK(Attention):
        def forward(self, x):
            batch, tokens, dim = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            k = k * self.scale
            q, k, v = (t.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            return self.proj((attn @ v).transpose(1, 2).reshape(batch, tokens, dim))

    torch.manual_seed(0)
    results = []
    for cls in (Attention, ScaleK):
        torch.manual_seed(0)
        block = cls(12, 3).double()
        x = torch.randn(2, 4, 12, dtype=torch.float64, requires_grad=True)
        out = block(x)
        out.backward(torch.ones_like(out))
        results.append([out, x.grad, *(p.grad for p in block.parameters())])
    assert all(torch.allclose(a, b, rtol=1e-12, atol=1e-14) for a, b in zip(*results))


def test_contiguous_is_caught_only_by_the_single_token(grade):
    """`q.contiguous()` copies q for several tokens; for one token in a batch of one it returns q itself, and the
    write is refused again: only the hidden 'one token' scenario sees it."""
    code, _ = WRONG["contiguous, then *="]
    result = grade(ID, code)
    outputs = [t.output for t in result.tests if t.status == "failed"]
    # the line is not named: the public trials never met it with an error (a hidden input could pick it)
    assert outputs and all(f"scenario '{ONE_TOKEN}'" in o and "(`q *= self.scale`)" not in o for o in outputs)
    assert grade(ID, code, public_only=True).score == 7  # the self-check's public inputs cannot see it


def test_every_parameter_gradient_is_compared(grade):
    code, _ = WRONG[".data scaling"]  # wrong only for qkv's q rows and the input
    gradients = next(t.output for t in grade(ID, code).tests if t.name == "gradients")
    assert "`grad x`" in gradients or "`grad qkv." in gradients
    code, _ = WRONG["scale folded into the weights"]  # the input's gradient is right; qkv's are not
    gradients = next(t.output for t in grade(ID, code).tests if t.name == "gradients")
    assert "`grad qkv.weight`" in gradients

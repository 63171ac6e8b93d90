"""custom_inplace: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/custom_inplace.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "custom_inplace"
BROKEN = known_submissions(ID).broken


def test_broken_starter_earns_nothing(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"in place", "saves output"} <= failing(result)
    assert next(t.output for t in result.tests if t.name == "forward").startswith("Not counted yet: ")


def test_a_data_write_with_mark_dirty_loses_the_in_place_points(grade):
    """`x.data` hides the write; mark_dirty still bumps x's counter once, so a counter that merely moved
    would let it through: the check wants both bumps (the write's and mark_dirty's)."""
    code, _ = known_submissions(ID).wrong["x.data with mark_dirty"]
    result = grade(ID, code)
    assert result.score == 0  # the gate: an op whose write autograd cannot see earns nothing
    output = next(t.output for t in result.tests if t.name == "in place")
    assert "moved by less than 2" in output and "`x.data`" in output


def test_every_visible_write_moves_the_counter_twice():
    """What the rule rests on, measured on this torch: each way of writing x that autograd sees, plus
    mark_dirty, moves x's counter by 2; a write through `.data` moves it by mark_dirty's 1 alone."""
    import torch
    import torch.nn.functional as F

    def masked(x, s):
        x[x < 0] *= s

    writes = {
        "out=": lambda x, s: torch.where(x > 0, x, x * s, out=x),
        "mul_": lambda x, s: x.mul_(torch.where(x > 0, 1.0, s)),
        "masked *=": masked,
        "F.leaky_relu_": lambda x, s: F.leaky_relu_(x, s),
        "detach().mul_": lambda x, s: x.detach().mul_(torch.where(x > 0, 1.0, s)),
        ".data": lambda x, s: x.data.mul_(torch.where(x > 0, 1.0, s)),
    }

    def bumps(write):
        class Op(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, slope):
                write(x, slope)
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        x = torch.randn(6, requires_grad=True) * 1
        before = x._version
        assert Op.apply(x, 0.2) is x
        return x._version - before

    assert {name: bumps(w) for name, w in writes.items()} == {**{n: 2 for n in writes}, ".data": 1}

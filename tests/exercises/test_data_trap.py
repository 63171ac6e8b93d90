"""data_trap: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG, SAYS) is in
references/data_trap.py, and tests/exercises/test_catalogue.py grades every entry."""

import torch

from autograder.exercises import get
from autograder.exercises.data_trap import MARGIN
from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "data_trap"
KNOWN = known_submissions(ID)


def test_broken_report_code_runs_and_earns_nothing_for_it(grade):
    """The trap: no error, the right loss, the wrong gradient (seen by gradcheck on public inputs too). The
    checks it would pass on their own (the loss, backward runs, the caller's tensors) are not counted while
    the gradient is wrong, and say so."""
    result = grade(ID, KNOWN.broken)
    outputs = {t.name: t.output for t in result.tests}
    assert result.score == 0 and failing(result) == set(outputs)
    assert "disagree with finite differences" in outputs["gradcheck"]
    assert outputs["forward"].startswith("Not counted yet: the loss must first be right")


def test_the_write_through_detach_is_named_with_the_op_that_saved(grade):
    code, _ = KNOWN.wrong["detach().clamp_"]
    said = next(t.output for t in grade(ID, code).tests if t.name == "backward runs")
    assert "which is output 0 of Softmax, is at version 1; expected version 0" in said
    assert "(`p.detach().clamp_(min=eps)`)" in said and "(`p = logits.softmax(dim=-1)`)" in said


def test_the_clamp_matters_and_no_probability_sits_on_its_kink():
    """Every scenario, for many seeds and both dtypes: some probability is below eps (so the .data and the
    log_softmax rewrites differ from the reference), and none is within MARGIN of eps (so float32, float64
    and finite differences agree on which side of the clamp each one is)."""
    for scenario in get(ID).scenarios:
        for seed in range(40):
            for dtype in (torch.float32, torch.float64):
                inputs = scenario.draw(torch.Generator().manual_seed(seed), dtype)
                p = inputs["logits"].double().softmax(dim=-1)
                eps = inputs["eps"]
                assert bool((p < eps).any()), (scenario.name, seed)
                assert float((p / eps - 1).abs().min()) >= MARGIN * 0.99, (scenario.name, seed)
                assert torch.allclose(inputs["target"].double().sum(dim=-1), torch.ones(()).double(), atol=1e-6)

"""Exercise 8 (gan_step_order): its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG, SAYS) is
in references/gan_step_order.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "gan_step_order"
KNOWN = known_submissions(ID)
BROKEN, CORRECT, WRONG = KNOWN.broken, KNOWN.correct, KNOWN.wrong
REFERENCE_ORDER = WRONG["the loss tensors returned"][0].replace("return d_loss, g_loss",
                                                                  "return d_loss.item(), g_loss.item()")


def output(result, check):
    return next(t.output for t in result.tests if t.name == check)


def only_on_hidden(code_for_hidden: str) -> str:
    """The reference order on the public inputs (batches of 5 and 6) and on the hidden scenario "gradients at
    entry" (a batch of 6), `code_for_hidden`'s step on the other hidden ones (larger batches): a submission whose
    failure only hidden trials show, and only from the second call on where it is a drift at step two."""
    rename = lambda code, name: code.replace("def train_step(", f"def {name}(")  # noqa: E731
    return (rename(REFERENCE_ORDER, "public_step") + rename(code_for_hidden, "hidden_step")
            + "\n\ndef train_step(G, D, opt_G, opt_D, real, noise):\n"
            "    step = public_step if real.shape[0] <= 6 else hidden_step\n"
            "    return step(G, D, opt_G, opt_D, real, noise)\n")


def test_the_reference_order_is_the_solution_order(grade):
    assert grade(ID, REFERENCE_ORDER).score == 10


def test_the_report_fails_on_g_loss_backward_and_names_d_step(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    said = output(result, "runs")
    assert "modified by an inplace operation" in said and "(`g_loss.backward()`)" in said
    assert "The line that broke autograd:" in said and "(`opt_D.step()`) changed a tensor in place" in said
    assert "(`d_real, d_fake = D(real), D(fake)`) had saved it for backward" in said
    assert "a fresh D(fake) after opt_D.step()" in said  # and what this exercise's order is


def test_a_culprit_met_on_hidden_inputs_only_is_explained_not_named(grade):
    """The public trials never met that write with an error, so its line could have been picked by a hidden
    input: the feedback names the scenario and explains the order, not the line."""
    code = only_on_hidden(BROKEN)
    result = grade(ID, code)
    assert failing(result) == {"runs", "D after step 1", "G after step 1", "two steps", "losses"}
    said = output(result, "runs")
    assert "(on hidden inputs: scenario '" in said
    assert "The line that broke autograd:" not in said and "(`opt_D.step()`)" not in said
    assert "is at version" not in said  # the rest of PyTorch's message may describe hidden inputs: not shown
    assert "a fresh D(fake) after opt_D.step()" in said


def test_feedback_says_which_network_drifted_at_which_step(grade):
    result = grade(ID, WRONG["D's step moved after G's backward"][0])
    d, g = output(result, "D after step 1"), output(result, "G after step 1")
    assert d.startswith("After step 1, D's parameters differ from the reference's")
    assert "D's optimizer used gradients from g_loss too" in d and "before g_loss's backward runs" in d
    assert g.startswith("After step 1, G's parameters differ from the reference's (D's do too")
    assert "g_loss was computed through D before its update" in g


def test_a_drift_at_step_two_only_is_explained_on_hidden_inputs(grade):
    result = grade(ID, only_on_hidden(WRONG["D's grads never zeroed"][0]))
    assert failing(result) == {"two steps", "losses"}
    said = output(result, "two steps")
    assert said.startswith("After step 2, D's parameters differ from the reference's.")
    assert "still held gradients from the previous call" in said and "opt_D.zero_grad()" in said
    assert "(on hidden inputs: scenario '" in said and "max abs error" not in said


def test_drift_that_follows_from_step_one_says_so(grade):
    result = grade(ID, WRONG["G's grads zeroed before d_loss's backward"][0])
    assert "G's optimizer used d_loss's gradient too" in output(result, "G after step 1")
    assert "after step 1 G's parameters already differ" in output(result, "two steps")
    assert "already differ after step 1" in output(result, "losses")


def test_the_self_check_judges_on_public_inputs_alone(grade):
    assert grade(ID, REFERENCE_ORDER, public_only=True).score == 10
    result = grade(ID, WRONG["G stepped first"][0], public_only=True)
    assert "G stepped before D" in output(result, "G after step 1")

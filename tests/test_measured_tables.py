"""The book's summary tables are generated from measurements (`autograder.notebook.measured`): a row is a claim
over the cases it declares, a row whose cases measure differently cannot come out as one verdict, and every
generated table of the book holds on the installed torch (its rows' expectations are met, case by case)."""

from __future__ import annotations

import pytest
import torch
from myst_nb.core.read import read_myst_markdown_notebook

from autograder.notebook import measured
from autograder.notebook.measured import (
    Claim,
    ClaimBroken,
    Measure,
    OpCase,
    Table,
    WriteOutcome,
    WriteProgram,
    clause,
    input_written,
    op_cases,
    op_saves,
    op_saves_kinds,
    outcome,
    output_written,
    step_moved,
    version_moved,
)
from tests.conftest import ROOT

PAGES = {
    "book/reference/card.md": {"SAVES", "BUMPS", "SHARES", "CLAUSES", "WHEN", "UNSEEN"},
    "book/chapters/03_version_counter.md": {"OP_TABLE"},
    "book/chapters/10_beyond_the_basics.md": {"CHECKLIST"},
}
"""Each page with generated tables, and the tables its cells tagged `measured-table` declare."""

SAME = Measure("value", lambda case: case)


# --- the machinery


def test_a_row_whose_cases_disagree_cannot_come_out_as_one_verdict():
    row = Claim("a claim", {"on a tensor": "error at backward", "on a view": "no error"})
    text = Table("claim", [SAME], [row]).markdown()
    body = text.splitlines()[-1]
    assert "depends:" in body and "on a tensor: `error at backward`" in body and "on a view: `no error`" in body
    (line,) = Table("claim", [SAME], [row]).measure()
    with pytest.raises(ClaimBroken):
        line[0].verdict()                                  # no single value exists to be said
    with pytest.raises(ClaimBroken, match="on a view"):   # and a row that claims one is refused, naming the case
        Table("claim", [SAME], [Claim("a claim", row.cases, expect={"value": "error at backward"})]).markdown()


def test_cases_that_agree_give_one_verdict_and_cases_with_the_same_value_are_named_together():
    agreed = Table("claim", [SAME], [Claim("one", {"a": 1, "b": 1}, expect={"value": 1})]).markdown()
    assert agreed.splitlines()[-1] == "| one | 1 |"
    grouped = Table("claim", [SAME], [Claim("two", {"a": 1, "b": 2, "c": 1})]).markdown()
    assert grouped.splitlines()[-1] == "| two | depends: a, c: 1; b: 2 |"


def test_a_row_without_cases_or_expecting_an_unknown_column_is_refused():
    with pytest.raises(TypeError):
        Claim("nothing", {})
    with pytest.raises(TypeError, match="do not exist"):
        Table("claim", [SAME], [Claim("one", {"a": 1}, expect={"valeu": 1})]).measure()


def test_an_outcome_says_where_a_program_failed_or_whether_its_gradient_was_right():
    def forward():
        a = torch.ones(2, requires_grad=True)
        return a, a.exp()

    def backward(state):
        state[1].sum().backward()
        return state[0].grad

    assert outcome(WriteProgram(forward, backward, lambda: torch.ones(2).exp())) is WriteOutcome.RIGHT
    assert outcome(WriteProgram(forward, backward, lambda: torch.ones(2))) is WriteOutcome.WRONG
    assert outcome(WriteProgram(forward, backward)) is WriteOutcome.NO_ERROR
    refused = WriteProgram(lambda: torch.ones(2, requires_grad=True).add_(1), backward)
    assert outcome(refused) is WriteOutcome.AT_THE_WRITE

    def written(state):
        state[1].add_(1)
        return backward(state)
    assert outcome(WriteProgram(forward, written)) is WriteOutcome.AT_BACKWARD
    assert WriteOutcome.WRONG.words() != WriteOutcome.RIGHT.words()


def test_the_op_zoo_reads_what_torch_saves():
    assert op_saves(OpCase("exp(a)", "on a tensor")) == (("result", "output"),)
    assert op_saves_kinds(OpCase("gelu(a)", "on a view")) == {"input"}
    assert op_saves_kinds(OpCase("a.norm(dim=1)", "on a tensor")) == {"input", "output"}   # both
    assert input_written(OpCase("a.gather(1, i)", "on a tensor")) is WriteOutcome.AT_BACKWARD  # its whole input
    assert output_written(OpCase("relu(a)", "on a view")) is WriteOutcome.AT_BACKWARD
    assert input_written(OpCase("embedding(i)", "on a tensor")) is None                   # indices: no write
    assert set(op_cases("relu(a)")) == {"`relu(a)` on a tensor", "`relu(a)` on a view"}
    with pytest.raises(TypeError, match="not in the op zoo"):
        op_cases("no_such_op(a)")


def test_versions_and_clauses_are_measured():
    assert version_moved(lambda t: t.add_(1)) == 1 and version_moved(lambda t: t + 1) == 0
    assert step_moved(torch.optim.SGD) == 1 and step_moved(torch.optim.SGD, fused=True) == 0

    def saved_view_written():
        h = torch.randn(6, requires_grad=True) * 1
        v = h[:2]
        y = v.pow(2)
        v.mul_(2)
        y.sum().backward()
    assert clause(saved_view_written) == "AsStrided" and clause(lambda: None) is None


# --- the book's tables


def measured_cells(page: str) -> str:
    nb = read_myst_markdown_notebook((ROOT / page).read_text(encoding="utf-8"))
    return "\n\n".join(cell.source for cell in nb.cells if cell.cell_type == "code"
                       and "measured-table" in cell.get("metadata", {}).get("tags", []))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_generated_table_of_the_book_holds_on_this_torch(page):
    """The page's cells tagged measured-table, run alone: they declare the tables named in PAGES, and every
    case of every row measures what the row expects (a broken claim raises ClaimBroken here)."""
    namespace: dict = {}
    exec(compile(measured_cells(page), page, "exec"), namespace)  # noqa: S102 - the book's own code
    tables = {name: value for name, value in namespace.items() if isinstance(value, Table)}
    assert set(tables) == PAGES[page]
    for name, table in tables.items():
        text = table.markdown()
        assert len(text.splitlines()) == len(table.rows) + 2, name
        assert all(row.cases for row in table.rows)


def test_the_tables_declare_the_cases_the_review_found_wanting():
    """Views as well as bases, fused optimizers, checkpoint's early stop, inference-mode views: declared."""
    namespace: dict = {}
    for page in PAGES:
        exec(compile(measured_cells(page), page, "exec"), namespace)  # noqa: S102 - the book's own code
    cases = {case for value in namespace.values() if isinstance(value, Table)
             for row in value.rows for case in row.cases}
    assert {"early stop on", "early stop off", "one more op after the write", "SGD(fused=True)",
            "inference_mode", "a view, written through itself"} <= cases
    assert {name.split("` ")[-1] for name in cases if name.startswith("`")} >= set(measured.MAKERS)

"""Exercise 5 (leaf_sgd): the solution, correct alternatives and plausible wrong fixes."""


from tests.conftest import failing

ID = "leaf_sgd"


def step(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f"import torch\n\n\ndef sgd_step(params, lr):\n{lines}"


BROKEN = step("""
for p in params:
    p -= lr * p.grad
    p.grad = None
""")

CORRECT = {
    "no_grad -=, grad None": step("""
with torch.no_grad():
    for p in params:
        p -= lr * p.grad
        p.grad = None
"""),
    "no_grad sub_, zero_": step("""
with torch.no_grad():
    for p in params:
        p.sub_(lr * p.grad)
for p in params:
    p.grad.zero_()
"""),
    "add_ with alpha": step("""
for p in params:
    with torch.no_grad():
        p.add_(p.grad, alpha=-lr)
    p.grad = None
"""),
    "detach().sub_ shares the counter": step("""
for p in params:
    p.detach().sub_(lr * p.grad)
    p.grad = None
"""),
    "copy_ under no_grad": step("""
with torch.no_grad():
    for p in params:
        p.copy_(p - lr * p.grad)
        p.grad = None
"""),
    "torch.optim.SGD": step("""
opt = torch.optim.SGD(params, lr=lr)
opt.step()
opt.zero_grad()
"""),
}

WRONG = {
    # name: (code, a check that must fail)
    ".data update": (step("""
for p in params:
    p.data -= lr * p.grad
    p.grad = None
"""), "version advanced"),
    "rebinding the loop name": (step("""
for p in params:
    p = p - lr * p.grad
    p.grad = None
"""), "values"),
    "requires_grad switched off and left off": (step("""
for p in params:
    p.requires_grad = False
    p -= lr * p.grad
    p.grad = None
"""), "still a leaf"),
    "grad not cleared": (step("""
with torch.no_grad():
    for p in params:
        p -= lr * p.grad
"""), "grad cleared"),
    "new tensors into the list": (step("""
with torch.no_grad():
    for i, p in enumerate(params):
        params[i] = (p - lr * p.grad).requires_grad_()
"""), "same tensors"),
    "zero_grad before the update": (step("""
with torch.no_grad():
    for p in params:
        p.grad.zero_()
        p -= lr * p.grad
"""), "values"),
    "p.data assigned a new tensor": (step("""
for p in params:
    p.data = p.data - lr * p.grad
    p.grad = None
"""), "same tensors"),
}


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"values", "same tensors", "two steps"} <= failing(result)
    assert "leaf Variable that requires grad" in next(t.output for t in result.tests if t.name == "values")

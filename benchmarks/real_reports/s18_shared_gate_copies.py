"""A shape written for issue 34 (not a public report): a gate module called six times per forward, written out of
place by one line; a copy at the saving line copies at every call.
"""
import torch

torch.manual_seed(0)


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.sigmoid(self.lin(x))
        out = y
        out *= 2
        return out


gate = Gate()
x = torch.randn(4, 8)
for _ in range(6):
    x = gate(x)
opt = torch.optim.SGD(gate.parameters(), lr=0.1)
x.sum().backward()
opt.step()
print("ok")

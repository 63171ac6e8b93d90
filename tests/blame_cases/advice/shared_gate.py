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

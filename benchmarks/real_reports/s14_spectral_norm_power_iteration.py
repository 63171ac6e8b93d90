"""A shape written for issue 34 (not a public report): a spectral norm whose power iteration writes its vector
buffer u under no_grad, after the forward saved u (PyTorch's own fix: clone u where it is saved).
"""
import torch

torch.manual_seed(0)


class SN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))
        self.register_buffer("u", torch.randn(4))

    def forward(self, x):
        with torch.no_grad():
            v = torch.nn.functional.normalize(self.w.t() @ self.u, dim=0)
            self.u.copy_(torch.nn.functional.normalize(self.w @ v, dim=0))
        sigma = torch.dot(self.u, self.w @ v)
        return x @ (self.w / sigma).t()


m = SN()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(2, 3)
for _ in range(2):
    opt.zero_grad()
    a = m(x)
    b = m(x)
    (a.sum() + b.sum()).backward()
    opt.step()
print("ok")

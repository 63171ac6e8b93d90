"""A shape written for issue 34 (not a public report): a contrastive queue (MoCo-like) whose enqueue writes the
queue buffer under no_grad after the logits saved it; MoCo's own fix clones the queue where the einsum reads it."""
import torch

torch.manual_seed(0)


class Contrast(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(6, 4)
        self.register_buffer("queue", torch.nn.functional.normalize(torch.randn(4, 8), dim=0))
        self.ptr = 0

    def forward(self, x):
        q = torch.nn.functional.normalize(self.enc(x), dim=1)
        with torch.no_grad():
            k = torch.nn.functional.normalize(self.enc(x + 0.1 * torch.randn_like(x)), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue)
        logits = torch.cat([l_pos, l_neg], dim=1) / 0.07
        with torch.no_grad():
            self.queue[:, self.ptr:self.ptr + x.shape[0]] = k.t()
            self.ptr = (self.ptr + x.shape[0]) % self.queue.shape[1]
        return logits


model = Contrast()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    logits = model(torch.randn(2, 6))
    loss = torch.nn.functional.cross_entropy(logits, torch.zeros(2, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok")

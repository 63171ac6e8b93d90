"""thuml/Anomaly-Transformer#1, "loss2.backward():runtime error" ([512, 38] ... AsStridedBackward0):
https://github.com/thuml/Anomaly-Transformer/issues/1

Original code (solver.py, line 188, quoted in the issue):
    # Minimax strategy
    loss1.backward(retain_graph=True)
    self.optimizer.step()
    loss2.backward()
    self.optimizer.step()
The reporter made it run by deleting the first step (a different training rule). The model is reduced
to an embedding, one attention layer and a projection; series/prior associations to softmaxes of two
linear maps; the association discrepancy to a KL divergence, as in the paper, with the same detaches.
"""
import torch
import torch.nn as nn


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size=6, enc_in=4, d_model=8):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.query, self.key = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, 1)
        self.projection = nn.Linear(d_model, enc_in)
        distances = torch.arange(win_size).float()
        self.register_buffer("distances", (distances[:, None] - distances[None, :]).abs())

    def forward(self, x):
        h = self.embedding(x)
        series = torch.softmax(self.query(h) @ self.key(h).transpose(1, 2) / 8 ** 0.5, dim=-1)
        sigma = torch.sigmoid(self.sigma(h)) + 0.1
        prior = torch.softmax(-self.distances ** 2 / (2 * sigma ** 2), dim=-1)
        return self.projection(series @ h), series, prior


def kl(p, q):
    return (p * (torch.log(p + 1e-4) - torch.log(q + 1e-4))).sum(-1).mean()


torch.manual_seed(0)
model = AnomalyTransformer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion, k = nn.MSELoss(), 3
for i in range(2):
    input = torch.randn(3, 6, 4)
    optimizer.zero_grad()
    output, series, prior = model(input)
    series_loss = kl(series, prior.detach()) + kl(prior.detach(), series)
    prior_loss = kl(prior, series.detach()) + kl(series.detach(), prior)
    rec_loss = criterion(output, input)
    loss1 = rec_loss - k * series_loss
    loss2 = rec_loss + k * prior_loss

    # Minimax strategy
    loss1.backward(retain_graph=True)
    optimizer.step()
    loss2.backward()
    optimizer.step()
print("loss1", loss1.item())

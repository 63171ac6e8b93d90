"""BierOne/bottom-up-attention-vqa#6, "...which is output 0 of ReluBackward0, is at version 1":
https://github.com/BierOne/bottom-up-attention-vqa/issues/6

Original code (model/classifier.py):
    self.main = nn.Sequential(
        nn.Linear(hid_dim[0], hid_dim[1]),
        nn.ReLU(),
        nn.Dropout(dropout, inplace=True),
        nn.Linear(hid_dim[1], out_dim)
    )
The answer in the thread: use nn.Dropout(dropout, inplace=False). FCNet is reduced to Linear + ReLU,
and the dimensions (2048 -> 512 -> 3129 answers) to a few units.
"""
import torch
import torch.nn as nn


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout=0.0):
        super(SimpleClassifier, self).__init__()
        self.q_net = nn.Sequential(nn.Linear(in_dim[0], hid_dim[0]), nn.ReLU())
        self.v_net = nn.Sequential(nn.Linear(in_dim[1], hid_dim[0]), nn.ReLU())
        self.main = nn.Sequential(
            nn.Linear(hid_dim[0], hid_dim[1]),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),
            nn.Linear(hid_dim[1], out_dim)
        )

    def forward(self, q_emb, v_emb):
        joint_repr = self.q_net(q_emb) * self.v_net(v_emb)
        logits = self.main(joint_repr)
        return logits


torch.manual_seed(0)
model = SimpleClassifier((12, 16), (8, 10), 6, dropout=0.5)
optim = torch.optim.Adamax(model.parameters())
q, v, answers = torch.randn(5, 12), torch.randn(5, 16), torch.rand(5, 6)
for step in range(2):
    logits = model(q, v)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, answers)
    loss.backward()
    optim.step()
    optim.zero_grad()
print("loss", loss.item())

"""qianyu-dlut/MVANet#2, "Training error : Relu variables has been modified by an inplace operation":
https://github.com/qianyu-dlut/MVANet/issues/2

Original code (model/MVANet.py), quoted in the issue:
    self.activation = get_activation_fn('relu')
    ...
    for m in self.modules():
        if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
            m.inplace = True
and, in MCLM.forward (before the repository added .clone()):
    g_hw_b_c = g_hw_b_c + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(g_hw_b_c)))))
The dropout made in-place by the loop overwrites the ReLU's output, which ReLU keeps for backward. The
Swin backbone and the multi-head attentions are left out; d_model 128 -> 8.
"""
import torch
import torch.nn.functional as F
from torch import nn


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(F"activation should be relu/gelu, not {activation}.")


class MCLM(nn.Module):
    def __init__(self, d_model):
        super(MCLM, self).__init__()
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.activation = get_activation_fn('relu')

    def forward(self, g_hw_b_c):
        g_hw_b_c = g_hw_b_c + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(g_hw_b_c)))))
        g_hw_b_c = self.norm2(g_hw_b_c)
        return g_hw_b_c


class MVANet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.multifieldcrossatt = MCLM(8)
        self.output = nn.Linear(8, 1)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        return self.output(self.multifieldcrossatt(self.stem(x)))


torch.manual_seed(0)
model = MVANet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
images, masks = torch.randn(16, 1, 4), torch.rand(16, 1, 1)
loss = F.binary_cross_entropy_with_logits(model(images), masks)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

"""AggMan96/RK-Net#9 (... output 0 of ReluBackward0 [8, 1, 96, 96] ...):
https://github.com/AggMan96/RK-Net/issues/9

Original code (model.py, USAM.__call__):
    att = x2 - x1
    att = self.bn(att)
    att = self.relu(att)
    if self.polish:
        att[:, :, :, 0] = 0
        att[:, :, :, -1] = 0
        att[:, :, 0, :] = 0
        att[:, :, -1, :] = 0
    output = x + att * x
The answer in the thread: "add att = att.clone() under if self.polish:". The backbone (a ResNet-50) is
replaced by one convolution; polish is True, as in the model that failed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super(USAM, self).__init__()
        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)
        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)
        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)

        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)

        if self.polish:
            att[:, :, :, 0] = 0
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0

        output = x + att * x

        return output


torch.manual_seed(0)
backbone, usam, head = nn.Conv2d(3, 8, 3, padding=1), USAM(), nn.Linear(8, 5)
optimizer = torch.optim.SGD([*backbone.parameters(), *usam.parameters(), *head.parameters()], lr=0.01)
images, labels = torch.randn(2, 3, 12, 12), torch.tensor([1, 3])
loss = F.cross_entropy(head(usam(backbone(images)).mean((2, 3))), labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

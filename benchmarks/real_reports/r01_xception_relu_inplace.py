"""osmr/imgclsmob#13, "Inplace ReLU's are unnecessary and wrong" (Xception, PyTorch 1.0):
https://github.com/osmr/imgclsmob/issues/13

Original code (pytorchcv/models/xception.py at the time, quoted in the issue):
    self.activ = nn.ReLU(inplace=True)
    ...
    x = self.activ(x)
The unit's identity branch (a 1x1 conv) saves the unit's input x; the body then starts with a
depthwise block whose ReLU(inplace=True) overwrites that same x. Sizes shrunk to run on a CPU.
"""
import torch
from torch import nn


class DwsConvBlock(nn.Module):
    """Depthwise separable convolution block with ReLU pre-activation."""

    def __init__(self, in_channels, out_channels, activate):
        super().__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)
        self.dw_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)
        x = self.pw_conv(self.dw_conv(x))
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True):
        super().__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        self.body = nn.Sequential()
        for i in range(reps):
            activate = start_with_relu if (i == 0) else True
            self.body.add_module(f"block{i + 1}", DwsConvBlock(in_channels if i == 0 else out_channels,
                                                               out_channels, activate))
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(kernel_size=3, stride=stride, padding=1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        x = self.body(x)
        x = x + identity
        return x


torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                    XceptionUnit(8, 16, stride=2, reps=2), XceptionUnit(16, 16, stride=1, reps=2))
head = nn.Linear(16, 10)
optimizer = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.1, momentum=0.9)
images, labels = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
for step in range(2):
    loss = nn.functional.cross_entropy(head(net(images).mean((2, 3))), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

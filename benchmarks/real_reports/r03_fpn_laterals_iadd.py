"""lyongo/NWPU-MOC#4, "gradient computation problems" (... output 0 of ReluBackward0 ...):
https://github.com/lyongo/NWPU-MOC/issues/4

Original code (models/FPN/FPN_Head.py, line 101, as quoted in the thread):
    laterals = [lateral_conv(inputs[i + self.start_level]) for i, lateral_conv in enumerate(self.lateral_convs)]
    ...
    for i in range(used_backbone_levels - 1, 0, -1):
        prev_shape = laterals[i - 1].shape[2:]
        laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')
The fix given in the thread: "Change += into =" (laterals[i - 1] = laterals[i - 1] + ...). Each lateral
conv is Conv2d -> BatchNorm2d -> ReLU, as in the repository's Conv2d block; sizes are small.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, same_padding=False):
        super(Conv2d, self).__init__()
        padding = int((kernel_size - 1) // 2) if same_padding else 0
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(FPN, self).__init__()
        self.lateral_convs = nn.ModuleList([Conv2d(c, out_channels, 1, same_padding=True) for c in in_channels])
        self.fpn_convs = nn.ModuleList([Conv2d(out_channels, out_channels, 3, same_padding=True)
                                        for _ in in_channels])

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return tuple(outs)


torch.manual_seed(0)
fpn = FPN([4, 8, 16], 6)
inputs = [torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4)]
optimizer = torch.optim.Adam(fpn.parameters(), lr=1e-3)
loss = sum(o.pow(2).mean() for o in fpn(inputs))
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

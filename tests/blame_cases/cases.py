"""One function per way of modifying a saved tensor. `# saved` marks the line that saved it and
`# culprit` the line that changed it (the tests read the markers, so lines can move freely)."""

import torch
import torch.nn.functional as F
from torch import nn

from . import helpers


def _x(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape, requires_grad=True)


def iadd():
    x = _x(3, 4)
    h = torch.relu(x * 1.0)  # saved
    h += torch.ones(3, 4)  # culprit
    h.sum().backward()


def add_():
    x = _x(3)
    h = torch.sigmoid(x)  # saved
    h.add_(1)  # culprit
    h.sum().backward()


def mul_():
    x = _x(3)
    h = torch.exp(x)  # saved
    h.mul_(2)  # culprit
    h.sum().backward()


def zero_():
    x = _x(3)
    h = torch.tanh(x)  # saved
    h.zero_()  # culprit
    h.sum().backward()


def clamp_():
    x = _x(3)
    h = x.sigmoid()  # saved
    h.clamp_(0.2, 0.8)  # culprit
    h.sum().backward()


def index_assignment():
    x = _x(4, 3)
    h = torch.relu(x)  # saved
    h[0] = 0.0  # culprit
    h.sum().backward()


def index_put_():
    x = _x(4)
    h = torch.sigmoid(x)  # saved
    h.index_put_((torch.tensor([1, 2]),), torch.zeros(2))  # culprit
    h.sum().backward()


def masked_fill_():
    s = _x(2, 5)
    p = torch.softmax(s, dim=1)  # saved
    p.masked_fill_(torch.arange(5) > 2, 0.0)  # culprit
    p.sum().backward()


def copy_():
    x = _x(3)
    h = torch.exp(x)  # saved
    h.copy_(torch.zeros(3))  # culprit
    h.sum().backward()


def out_argument():
    x = _x(3)
    scale = torch.ones(3)
    y = x * scale  # saved
    torch.mul(torch.ones(3), 2.0, out=scale)  # culprit
    y.sum().backward()


def relu_module_inplace():
    x = _x(2, 3)
    act = nn.ReLU(inplace=True)
    h = torch.sigmoid(x)  # saved
    y = act(h)  # culprit
    y.sum().backward()


def dropout_inplace():
    torch.manual_seed(0)
    proj = nn.Linear(4, 4)
    h = F.relu(proj(torch.randn(8, 4)))  # saved
    y = F.dropout(h, p=0.5, training=True, inplace=True)  # culprit
    y.sum().backward()


def through_view():
    x = _x(3, 4)
    h = torch.exp(x)  # saved
    column = h[:, 0]
    column.mul_(2)  # culprit
    h.sum().backward()


def through_detach():
    x = _x(3)
    h = torch.sigmoid(x)  # saved
    h.detach().zero_()  # culprit
    h.sum().backward()


def optimizer_step():
    """Seed 003: the state carries the previous chunk's graph, whose saved weights `step()` changed."""
    torch.manual_seed(0)
    rnn = nn.RNN(3, 4, batch_first=True)
    opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
    h = torch.zeros(1, 2, 4)
    for _ in range(2):
        out, h = rnn(torch.randn(2, 5, 3), h)  # saved
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()  # culprit


def helper_function():
    x = _x(3)
    h = torch.exp(x)  # saved
    helpers.scale_(h, 2.0)  # caller
    h.sum().backward()


def other_module():
    x = _x(2, 3)
    h = torch.sigmoid(x)  # saved
    y = helpers.AddBias()(h)  # caller
    y.sum().backward()


def several():
    x = _x(3)
    h = torch.relu(x * 2.0)  # saved
    h += 1  # culprit
    h *= 3  # culprit 2
    h.clamp_(max=4.0)  # culprit 3
    h.sum().backward()


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.where(x > 0, x, 0.01 * x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * torch.where(y > 0, 1.0, 0.01)


def custom_function():
    x = _x(3)
    y = LeakyReLU.apply(x * 1.0)  # saved
    y.add_(1)  # culprit
    y.sum().backward()


def correct(x=None, seed=0):
    """No in-place change of a saved tensor; returns what a test compares with and without the locator."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    data = torch.randn(16, 4)
    losses = []
    for _ in range(3):
        h = net(data)
        y = h * 2
        y += 1  # in place, but nothing saved y: fine
        loss = y.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), [p.detach().clone() for p in net.parameters()]


CASES = ["iadd", "add_", "mul_", "zero_", "clamp_", "index_assignment", "index_put_", "masked_fill_", "copy_",
         "out_argument", "relu_module_inplace", "dropout_inplace", "through_view", "through_detach",
         "optimizer_step", "custom_function"]

"""What the culprit locator costs, beside what `torch.autograd.set_detect_anomaly(True)` costs.

Goal (issue 5): `locate()` is no slower than anomaly mode. Workloads: a (correct) training step of each
report the course is built on (seeds 000-003) and of a small ResNet built by hand (no torchvision). Each
mode is timed in the same run, interleaved, median of repeats. Run:
`.venv/bin/python benchmarks/blame_overhead.py [--repeats N]`. Prints per-step times and the ratios, then
what the suggested fix costs: it is made once per in-place error, from the report, never per step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from autograder.blame import locate, report_of  # noqa: E402
from autograder.blame.suggest.suggest import suggest  # noqa: E402


def _step(model: nn.Module, opt: torch.optim.Optimizer, loss: Callable[[], torch.Tensor]) -> Callable[[], None]:
    def run() -> None:
        opt.zero_grad()
        loss().backward()
        opt.step()
    return run


def seed000_head() -> Callable[[], None]:
    """Classifier head: Linear -> ReLU -> dropout -> Linear (the fixed, out-of-place dropout)."""
    proj, fc = nn.Linear(64, 64), nn.Linear(64, 10)
    params = [*proj.parameters(), *fc.parameters()]
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    opt = torch.optim.SGD(params, lr=0.01)
    return _step(proj, opt, lambda: F.cross_entropy(fc(F.dropout(F.relu(proj(x)), 0.2, training=True)), y))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)  # safe: BN saved its input
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x))


def seed001_residual() -> Callable[[], None]:
    block = BasicBlock(8, 8)
    x = torch.randn(4, 8, 16, 16)
    return _step(block, torch.optim.SGD(block.parameters(), lr=0.01), lambda: block(x).pow(2).mean())


def seed002_two_stage() -> Callable[[], None]:
    """Two passes over token embeddings, the second on a copy with label tokens written in (the fix)."""
    embed, fc_a, fc_b = nn.Embedding(100, 32), nn.Linear(32, 5), nn.Linear(32, 7)
    labels = torch.randint(0, 100, (5, 3))
    tokens, mask = torch.randint(0, 100, (8, 16)), torch.ones(8, 16)
    params = [*embed.parameters(), *fc_a.parameters(), *fc_b.parameters()]

    def pool(t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return (embed(t) * m[..., None]).sum(1) / m.sum(1, keepdim=True)

    def loss() -> torch.Tensor:
        logits_a = fc_a(pool(tokens, mask))
        tokens2, mask2 = tokens.clone(), mask.clone()
        tokens2[:, -3:] = labels[logits_a.argmax(1)]
        mask2[:, -3:] = 1
        return logits_a.logsumexp(1).mean() + fc_b(pool(tokens2, mask2)).logsumexp(1).mean()

    return _step(embed, torch.optim.SGD(params, lr=0.01), loss)


def seed003_rnn() -> Callable[[], None]:
    """Truncated BPTT over 4 chunks of 10 steps: one optimizer step per chunk, the state detached."""
    rnn, head = nn.RNN(8, 16, batch_first=True), nn.Linear(16, 1)
    opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.01, momentum=0.9)
    chunks = [torch.randn(4, 10, 8) for _ in range(4)]

    def run() -> None:
        h = torch.zeros(1, 4, 16)
        for chunk in chunks:
            opt.zero_grad()
            out, h = rnn(chunk, h)
            head(out).pow(2).mean().backward()
            opt.step()
            h = h.detach()
    return run


class SmallResNet(nn.Module):
    """ResNet-style: a stem and three stages of two basic blocks (16, 32, 64 channels), for 32x32 inputs."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        layers, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.layers(self.stem(x)).mean((2, 3)))


def small_resnet() -> Callable[[], None]:
    model = SmallResNet()
    x, y = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _step(model, opt, lambda: F.cross_entropy(model(x), y))


WORKLOADS = {"seed000 classifier head": seed000_head, "seed001 residual block": seed001_residual,
             "seed002 two-stage classifier": seed002_two_stage, "seed003 RNN, 4 TBPTT chunks": seed003_rnn,
             "small ResNet (6 blocks, 8x3x32x32)": small_resnet}
MODES = {"plain": nullcontext, "anomaly": lambda: torch.autograd.set_detect_anomaly(True), "locate": locate}


def timings(make: Callable[[], Callable[[], None]], repeats: int, steps: int) -> dict[str, float]:
    """Median seconds per step in each mode, the modes interleaved so that machine noise hits them alike."""
    torch.manual_seed(0)
    step = make()
    samples: dict[str, list[float]] = {m: [] for m in MODES}
    for r in range(repeats + 1):
        for mode, context in MODES.items():
            with context():
                start = time.perf_counter()
                for _ in range(steps):
                    step()
                seconds = (time.perf_counter() - start) / steps
            if r:  # the first round warms up
                samples[mode].append(seconds)
    return {m: statistics.median(s) for m, s in samples.items()}


def broken_residual() -> None:
    """Seed 001 before its fix: `+=` into the output of a ReLU, which the ReLU saved for backward."""
    fc, x = nn.Linear(8, 8), torch.randn(4, 8)
    h = torch.relu(fc(x))
    h += x
    h.sum().backward()


def suggestion_seconds(repeats: int) -> float:
    """Median seconds to turn one report into its suggestion (parse the file, find the rewrite, diff it)."""
    try:
        with locate():
            broken_residual()
    except RuntimeError as error:
        report = report_of(error).to_json()
    samples = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        assert suggest(report).after is not None
        samples.append(time.perf_counter() - start)
    return statistics.median(samples[1:])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    import warnings
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    print(f"torch {torch.__version__}, 1 thread, median of {args.repeats} x {args.steps} steps")
    print(f"{'workload':36s} {'plain ms':>9s} {'anomaly ms':>11s} {'locate ms':>10s} {'anomaly/plain':>14s} "
          f"{'locate/plain':>13s} {'locate/anomaly':>15s}")
    ratios = []
    for name, make in WORKLOADS.items():
        t = timings(make, args.repeats, args.steps)
        ratio = t["locate"] / t["anomaly"]
        ratios.append(ratio)
        print(f"{name:36s} {t['plain'] * 1e3:9.2f} {t['anomaly'] * 1e3:11.2f} {t['locate'] * 1e3:10.2f} "
              f"{t['anomaly'] / t['plain']:14.2f} {t['locate'] / t['plain']:13.2f} {ratio:15.2f}")
    worst = max(ratios)
    print(f"locate/anomaly: worst {worst:.2f}, geometric mean {statistics.geometric_mean(ratios):.2f} "
          f"(goal: <= 1.00: {'met' if worst <= 1.0 else 'NOT met'})")
    print(f"suggested fix for one report: {suggestion_seconds(args.repeats) * 1e3:.1f} ms, once per in-place "
          f"error (the steps above never make one)")


if __name__ == "__main__":
    main()

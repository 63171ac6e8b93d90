import torch

torch.manual_seed(0)
conv = torch.nn.Conv1d(2, 2, 3, padding=1)
x = torch.randn(2, 3, 2, 5, requires_grad=True)
T = x * 1.0
for b in range(2):
    for t in range(3):
        T[b][t] = conv(T[b][t].unsqueeze(0)).squeeze(0)
T.sum().backward()
print("ok")

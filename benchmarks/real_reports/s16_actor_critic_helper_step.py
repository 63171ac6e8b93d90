"""A shape written for issue 34 (not a public report): an actor-critic whose critic step runs inside a helper
between the policy loss's forward and its backward.
"""
import torch

torch.manual_seed(0)
actor = torch.nn.Linear(3, 2)
critic = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt_a = torch.optim.SGD(actor.parameters(), lr=0.1)
opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)


def update_critic(s, target):
    loss = ((critic(s) - target) ** 2).mean()
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()


for _ in range(2):
    s = torch.randn(4, 3)
    value = critic(s)
    logp = torch.log_softmax(actor(s), dim=1)[:, 0:1]
    update_critic(s, torch.ones(4, 1))
    policy_loss = -(logp * value).mean()
    opt_a.zero_grad()
    policy_loss.backward()
    opt_a.step()
print("ok")

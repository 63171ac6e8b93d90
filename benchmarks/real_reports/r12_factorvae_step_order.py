"""1Konny/FactorVAE#15, "Inplace problem when calling D_tc_loss.backward()" ([4096, 6] ... TBackward):
https://github.com/1Konny/FactorVAE/issues/15

Original code (solver.py, quoted in the issue):
    self.optim_VAE.zero_grad()
    vae_loss.backward(retain_graph=True)
    self.optim_VAE.step()
    ...
    D_z_pperm = self.D(z_pperm)
    D_tc_loss = 0.5*(F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))
    self.optim_D.zero_grad()
    D_tc_loss.backward()
    self.optim_D.step()
D_z = self.D(z) was computed from the VAE's z before optim_VAE.step() changed the encoder's weights.
Convolutional encoder/decoder reduced to Linear layers (two in the encoder, so that one keeps its weight);
z_dim 10 -> 6 as in the message; batches small.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def permute_dims(z):
    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm = torch.randperm(B).to(z.device)
        perm_z.append(z_j[perm])
    return torch.cat(perm_z, 1)


class VAE(nn.Module):
    def __init__(self, z_dim=6):
        super().__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2 * z_dim))
        self.decode = nn.Linear(z_dim, 16)

    def forward(self, x):
        stats = self.encode(x)
        mu, logvar = stats[:, :self.z_dim], stats[:, self.z_dim:]
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.decode(z), mu, logvar, z


torch.manual_seed(0)
VAE_, D = VAE(), nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
optim_VAE = torch.optim.Adam(VAE_.parameters(), lr=1e-4)
optim_D = torch.optim.Adam(D.parameters(), lr=1e-4)
ones, zeros = torch.ones(8, dtype=torch.long), torch.zeros(8, dtype=torch.long)
for step in range(2):
    x_true1, x_true2 = torch.rand(8, 16), torch.rand(8, 16)
    x_recon, mu, logvar, z = VAE_(x_true1)
    vae_recon_loss = F.binary_cross_entropy_with_logits(x_recon, x_true1, reduction='sum') / 8
    vae_kld = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
    D_z = D(z)
    vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()
    vae_loss = vae_recon_loss + vae_kld + 6.4 * vae_tc_loss

    optim_VAE.zero_grad()
    vae_loss.backward(retain_graph=True)
    optim_VAE.step()

    z_prime = VAE_(x_true2)[3]
    z_pperm = permute_dims(z_prime).detach()
    D_z_pperm = D(z_pperm)
    D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))

    optim_D.zero_grad()
    D_tc_loss.backward()
    optim_D.step()
print("D_tc_loss", D_tc_loss.item())

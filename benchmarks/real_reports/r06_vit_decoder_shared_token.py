"""thuanz123/enhancing-transformers#11, "An inplace operation in the forward process":
https://github.com/thuanz123/enhancing-transformers/issues/11

Original code (enhancing/modules/stage1/layers.py, ViTDecoder.forward), and the use that failed:
    def forward(self, token: torch.FloatTensor) -> torch.FloatTensor:
        token += self.de_pos_embedding
        x = self.transformer(token)
        return self.to_pixel(x)
    ...
    rec_a = decoder_a(quant)
    rec_b = decoder_b(quant)  # Above error will occur when backwarding, as the quant is modified
The issue's suggestion: `token = token + self.de_pos_embedding`. The transformer is reduced to
LayerNorm + Linear and the pixel head to a Linear; the quantizer to a Linear.
"""
import torch
import torch.nn as nn


class ViTDecoder(nn.Module):
    def __init__(self, num_patches=4, dim=8, out_dim=12):
        super().__init__()
        self.transformer = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim))
        self.de_pos_embedding = nn.Parameter(torch.randn(1, num_patches, dim))
        self.to_pixel = nn.Linear(dim, out_dim)

    def forward(self, token: torch.FloatTensor) -> torch.FloatTensor:
        token += self.de_pos_embedding
        x = self.transformer(token)

        return self.to_pixel(x)


torch.manual_seed(0)
encoder, decoder_a, decoder_b = nn.Linear(12, 8), ViTDecoder(), ViTDecoder()
params = [*encoder.parameters(), *decoder_a.parameters(), *decoder_b.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-4)
images = torch.randn(2, 4, 12)
quant = encoder(images)
rec_a = decoder_a(quant)
rec_b = decoder_b(quant)
loss = (rec_a - images).abs().mean() + (rec_b - images).abs().mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

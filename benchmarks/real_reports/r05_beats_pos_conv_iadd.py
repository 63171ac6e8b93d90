"""microsoft/unilm#999, "Update L. 116 of backbone.py" (BEATs fine-tuning, [32, 768, 248]):
https://github.com/microsoft/unilm/pull/999

Original code (beats/backbone.py, TransformerEncoder.extract_features):
    x_conv = self.pos_conv(x.transpose(1, 2))
    x_conv = x_conv.transpose(1, 2)
    x += x_conv
The PR's fix: "we replaced `x += x_conv` by `x = x.clone() + x_conv`". The convolutional positional
embedding keeps its input (a transposed view of x) for backward; `+=` then writes into x. Layers after
it are reduced to LayerNorm + Linear; 768 channels to 16.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        return x[:, :, :-self.remove] if self.remove > 0 else x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=16, conv_pos=8, conv_pos_groups=4):
        super().__init__()
        self.dropout = 0.1
        self.pos_conv = nn.Sequential(nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos,
                                                padding=conv_pos // 2, groups=conv_pos_groups),
                                      SamePad(conv_pos), nn.GELU())
        self.layer_norm = nn.LayerNorm(embedding_dim)
        self.layer = nn.Linear(embedding_dim, embedding_dim)

    def extract_features(self, x, padding_mask=None):
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv

        x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.layer(x)


torch.manual_seed(0)
patch_embedding = nn.Linear(10, 16)
encoder = TransformerEncoder()
optimizer = torch.optim.AdamW([*patch_embedding.parameters(), *encoder.parameters()], lr=1e-4)
fbank = torch.randn(2, 12, 10)
loss = encoder.extract_features(patch_embedding(fbank)).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

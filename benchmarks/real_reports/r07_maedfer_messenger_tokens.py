"""sunlicai/MAE-DFER#15, "in-place operation error?" (PyTorch 2.0, ... AsStridedBackward0 ...):
https://github.com/sunlicai/MAE-DFER/issues/15

Original code (modeling_finetune.py, around lines 295-299, before the fix):
    messenger_tokens = rearrange(x[:,0], '(b n) c -> b n c', b=b) # attn on 'n' dim
    messenger_tokens = messenger_tokens + self.drop_path(
        self.second_attn(self.second_attn_norm0(messenger_tokens))
    )
    x[:,0] = rearrange(messenger_tokens, 'b n c -> (b n) c')
The reporter's fix: rearrange(x[:,0].clone(), ...). The LayerNorm keeps its input, a view of x[:, 0],
and `x[:,0] = ...` writes into x. einops is not installed here: its rearranges are replaced by the
equivalent views; the attention blocks are reduced to Linear layers, drop_path to identity.
"""
import torch
import torch.nn as nn


class LocalGlobalBlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.first_attn_norm0 = nn.LayerNorm(dim)
        self.first_attn = nn.Linear(dim, dim)
        self.second_attn_norm0 = nn.LayerNorm(dim)
        self.second_attn = nn.Linear(dim, dim)
        self.drop_path = nn.Identity()

    def forward(self, x, b):
        bn, s, c = x.shape
        n = bn // b
        x = x + self.drop_path(self.first_attn(self.first_attn_norm0(x)))
        messenger_tokens = x[:, 0].view(b, n, c)  # rearrange(x[:,0], '(b n) c -> b n c', b=b)
        messenger_tokens = messenger_tokens + self.drop_path(
            self.second_attn(self.second_attn_norm0(messenger_tokens))
        )
        x[:, 0] = messenger_tokens.reshape(b * n, c)  # rearrange(messenger_tokens, 'b n c -> (b n) c')
        return x


torch.manual_seed(0)
embed, block, head = nn.Linear(6, 8), LocalGlobalBlock(), nn.Linear(8, 7)
optimizer = torch.optim.AdamW([*embed.parameters(), *block.parameters(), *head.parameters()], lr=1e-3)
videos, labels = torch.randn(2 * 3, 5, 6), torch.tensor([2, 4])
features = block(embed(videos), b=2)
loss = nn.functional.cross_entropy(head(features[:, 0].view(2, 3, 8).mean(1)), labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())

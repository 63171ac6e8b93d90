"""jcmgray/symmray#2, "change in-place operation x*=y to x = x*y in truncated-SVD":
https://github.com/jcmgray/symmray/pull/2

Original code (symmray/linalg.py, svd_truncated(), absorbing the singular values into both factors):
    U, s, VH = svd(x)
    ...
    for (c0, c1), n_chi in zip(U.sectors, sub_max_bonds):
        U.blocks[(c0, c1)] = U.blocks[(c0, c1)][:, :n_chi]
        s.blocks[c1] = s.blocks[c1][:n_chi]
        VH.blocks[(c1, c1)] = VH.blocks[(c1, c1)][:n_chi, :]
    ...
    for c0, c1 in U.sectors:
        ...
        elif absorb == 0:
            s_sqrt = ar.do("sqrt", s.blocks[c1], like=backend)
            U.blocks[(c0, c1)] *= s_sqrt.reshape((1, -1))
            VH.blocks[(c1, c1)] *= s_sqrt.reshape((-1, 1))
The PR: "so that torch can do backpropagation ... in-place operation is not allowed"; it writes both lines as
`x = x * y`. Two culprits: each `*=` writes into a slice of a factor that `linalg.svd` saved for backward, so
fixing one leaves the other's error. The block-sparse array is reduced to a dict of blocks, the truncation to
a fixed bond, the tensor network to one matrix fitted to a target.
"""
import torch


class BlockArray:
    def __init__(self, blocks):
        self.blocks = blocks

    @property
    def sectors(self):
        return tuple(self.blocks)


def svd(x):
    u_blocks, s_store, v_blocks = {}, {}, {}
    for sector, array in x.blocks.items():
        u, s, v = torch.linalg.svd(array, full_matrices=False)
        u_blocks[sector] = u
        s_store[sector[1]] = s
        v_blocks[(sector[1], sector[1])] = v
    return BlockArray(u_blocks), BlockArray(s_store), BlockArray(v_blocks)


def svd_truncated(x, max_bond=3):
    U, s, VH = svd(x)
    for c0, c1 in U.sectors:
        U.blocks[(c0, c1)] = U.blocks[(c0, c1)][:, :max_bond]
        s.blocks[c1] = s.blocks[c1][:max_bond]
        VH.blocks[(c1, c1)] = VH.blocks[(c1, c1)][:max_bond, :]
    for c0, c1 in U.sectors:
        s_sqrt = torch.sqrt(s.blocks[c1])
        U.blocks[(c0, c1)] *= s_sqrt.reshape((1, -1))
        VH.blocks[(c1, c1)] *= s_sqrt.reshape((-1, 1))
    return U, None, VH


torch.manual_seed(0)
x = BlockArray({(0, 0): torch.randn(5, 4, requires_grad=True), (1, 1): torch.randn(4, 4, requires_grad=True)})
targets = {sector: torch.randn(*array.shape) for sector, array in x.blocks.items()}
optimizer = torch.optim.Adam(list(x.blocks.values()), lr=0.01)
for step in range(2):
    U, _, VH = svd_truncated(x)
    loss = sum(((U.blocks[(c0, c1)] @ VH.blocks[(c1, c1)] - targets[(c0, c1)]) ** 2).sum() for c0, c1 in U.sectors)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

"""Reference of exercise 10, saved_hooks: hooks that keep PyTorch's version check.

With saved-tensor hooks installed, PyTorch skips its own version check. `pack_hook` keeps `tensor.detach()`
(the same data and the same version counter, no history: a saved output kept with its history would make a
reference cycle) and the version at pack time; `unpack_hook` compares the counter with it, as PyTorch does
without hooks, and raises PyTorch's own wording where they differ. Everything it needs is in the course:
`detach()` shares the counter (chapter 5), `_version` reads it (chapter 3).
"""

from __future__ import annotations

import torch

from autograder.exercises.saved_hooks import EXERCISE

PREFIX = "one of the variables needed for gradient computation has been modified by an inplace operation"


def pack_hook(tensor: torch.Tensor):
    return tensor.detach(), tensor._version  # same data, same version counter, no history


def unpack_hook(packed) -> torch.Tensor:
    tensor, saved_at = packed
    if tensor._version != saved_at:
        raise RuntimeError(f"{PREFIX}: [{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; "
                           f"expected version {saved_at} instead (seen by the saved-tensor hooks)")
    return tensor


REFERENCE = {"pack_hook": pack_hook, "unpack_hook": unpack_hook}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def hooks(pack: str, unpack: str, head: str = "import torch\n") -> str:
    body = "".join(f"    {line}\n" for line in pack.strip().splitlines())
    unbody = "".join(f"    {line}\n" for line in unpack.strip().splitlines())
    return f"{head}\n\ndef pack_hook(tensor):\n{body}\n\ndef unpack_hook(packed):\n{unbody}"


CHECK = """
if alias._version != version:
    raise RuntimeError(f"a saved tensor was modified in place: it is at version {alias._version}; expected "
                       f"version {version} instead")
"""

# The starter: what torch.autograd.graph.save_on_cpu does. On the CPU `.cpu()` is the tensor itself, and with
# hooks installed PyTorch skips its version check: no error, wrong gradients.
BROKEN = hooks("return tensor.device, tensor.cpu()", """
device, tensor = packed
return tensor.to(device)
""")

CORRECT = {
    "a detached alias and its version": hooks("return tensor.detach(), tensor._version", """
alias, version = packed
""" + CHECK + "return alias"),
    "a dict, PyTorch's whole wording": hooks("""
return {"tensor": tensor.detach(), "version": tensor._version}
""", """
tensor, version = packed["tensor"], packed["version"]
if tensor._version != version:
    raise RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                       f"operation: [{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; "
                       f"expected version {version} instead.")
return tensor
"""),
    # An exception of its own, a subclass of RuntimeError: as good as RuntimeError itself.
    "a RuntimeError subclass of its own": hooks("""
return tensor.detach(), tensor._version
""", """
alias, version = packed
if alias._version != version:
    raise SavedTensorModified(f"saved tensor changed in place: is at version {alias._version}; expected version "
                              f"{version} instead")
return alias
""", head='''import torch


class SavedTensorModified(RuntimeError):
    """A tensor saved for backward was changed in place after it was saved."""
'''),
    "a class with slots": hooks("return Packed(tensor)", "return packed.unpack()", head='''import torch


class Packed:
    __slots__ = ("alias", "version")

    def __init__(self, tensor):
        self.alias, self.version = tensor.detach(), tensor._version

    def unpack(self):
        if self.alias._version != self.version:
            raise RuntimeError(f"in-place change of a saved tensor: is at version {self.alias._version}; "
                               f"expected version {self.version} instead")
        return self.alias
'''),
    "a copy to compute with, an alias for the version": hooks("""
return tensor.detach().clone(), tensor.detach(), tensor._version
""", """
copy, alias, version = packed
""" + CHECK + "return copy"),
}

WRONG = {
    # name: (code, the checks that must fail)
    "identity hooks": (hooks("return tensor", "return packed"), {"catches in-place", "no history"}),
    "save_on_cpu's own hooks": ("import torch\n\n_hooks = torch.autograd.graph.save_on_cpu()\n"
                                "pack_hook, unpack_hook = _hooks.pack_hook, _hooks.unpack_hook\n",
                                {"catches in-place"}),
    "keeps the tensor with its history": (hooks("return tensor, tensor._version", """
tensor, version = packed
if tensor._version != version:
    raise RuntimeError(f"modified in place: is at version {tensor._version}; expected version {version} instead")
return tensor
"""), {"no history"}),
    "weak reference to the tensor": (hooks("""
return tensor.detach().clone(), weakref.ref(tensor), tensor._version
""", """
copy, ref, version = packed
original = ref()
if original is not None and original._version != version:
    raise RuntimeError(f"modified in place: is at version {original._version}; expected version {version} instead")
return copy
""", head="import weakref\n\nimport torch\n"), {"catches in-place"}),
    "checks the copy's version": (hooks("""
return tensor.detach().clone(), tensor._version
""", """
copy, version = packed
if copy._version != version:
    raise RuntimeError(f"modified in place: is at version {copy._version}; expected version {version} instead")
return copy
"""), {"catches in-place"}),
    "expects version 0": (hooks("return tensor.detach()", """
if packed._version != 0:
    raise RuntimeError(f"modified in place: is at version {packed._version}; expected version 0 instead")
return packed
"""), {"honest gradients"}),
    "checks at pack time only": (hooks("""
if tensor._version != 0:
    raise RuntimeError("a saved tensor was modified in place")
return tensor.detach()
""", "return packed"), {"catches in-place", "honest gradients"}),
    "assert instead of RuntimeError": (hooks("return tensor.detach(), tensor._version", """
alias, version = packed
assert alias._version == version, "a saved tensor was modified in place"
return alias
"""), {"catches in-place"}),
    "bfloat16 copy": (hooks("""
return tensor.dtype, tensor.detach().to(torch.bfloat16), tensor.detach(), tensor._version
""", """
dtype, copy, alias, version = packed
""" + CHECK + "return copy.to(dtype)"), {"honest gradients", "round trip"}),
    "unpack frees its copy": (hooks("""
return {"copy": tensor.detach().clone(), "alias": tensor.detach(), "version": tensor._version}
""", """
copy = packed.pop("copy")  # free the memory as soon as backward has it
if packed["alias"]._version != packed["version"]:
    raise RuntimeError(f"modified in place: is at version {packed['alias']._version}; expected version "
                       f"{packed['version']} instead")
return copy
"""), {"double use"}),
    # Messages a loose pattern would accept: none says the versions, or says fixed ones.
    "says it changed, not the versions": (hooks("return tensor.detach(), tensor._version", """
alias, version = packed
if alias._version != version:
    raise RuntimeError("a tensor saved for backward was modified in place")
return alias
"""), {"says the versions"}),
    "versions hard-coded": (hooks("return tensor.detach(), tensor._version", """
alias, version = packed
if alias._version != version:
    raise RuntimeError("modified by an inplace operation: is at version 1; expected version 0 instead")
return alias
"""), {"says the versions"}),
    "versions swapped": (hooks("return tensor.detach(), tensor._version", """
alias, version = packed
if alias._version != version:
    raise RuntimeError(f"modified by an inplace operation: is at version {version}; expected version "
                       f"{alias._version} instead")
return alias
"""), {"says the versions"}),
    # The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
    "starter without the raise": ('''import torch


def pack_hook(tensor):
    """Called by autograd for each tensor it saves; autograd keeps what this returns."""
    # TODO: your fix goes here (see the task above).
    pass


def unpack_hook(packed):
    """Called by backward with what pack_hook returned; returns the tensor backward computes with."""
    # TODO: your fix goes here (see the task above).
    pass
''', {c.name for c in EXERCISE.checks}),
}

SAYS = {
    "weak reference to the tensor": ("backward ran without an error under your hooks",),
    "save_on_cpu's own hooks": ("backward ran without an error under your hooks",),
    "assert instead of RuntimeError": ("not a RuntimeError",),
    "expects version 0": ("raise only when the version",),
    "says it changed, not the versions": ("is at version N; expected version M",),
    "versions hard-coded": ("names other versions than the tensor's",),
}

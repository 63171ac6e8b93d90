"""Reference of exercise 10, saved_hooks: pack a real copy, and a handle on the version counter that holds no
memory; unpack checks the version, as PyTorch does without hooks, then gives the copy back on its device.

`tensor.detach()` shares the tensor's version counter (and its storage); assigning `.data` swaps the storage for
an empty one and keeps the counter (the solution notebook asserts both). The handle reads the counter as long as
autograd keeps the packed object, whatever happened to the tensor, its views and its base, and keeps none of
their memory.
"""

from __future__ import annotations

import torch

PREFIX = "one of the variables needed for gradient computation has been modified by an inplace operation"


def pack_hook(tensor: torch.Tensor):
    counter = tensor.detach()  # shares the version counter (and, until the next line, the storage)
    counter.data = tensor.new_empty(0)  # lets go of the storage, keeps the counter
    copy = tensor.detach().to("cpu", copy=True)  # a copy even on the CPU, where .cpu() is the tensor itself
    return tensor.device, copy, counter, tensor._version


def unpack_hook(packed) -> torch.Tensor:
    device, copy, counter, saved_at = packed
    if counter._version != saved_at:
        raise RuntimeError(f"{PREFIX}: [{copy.type()} {list(copy.shape)}] is at version {counter._version}; "
                           f"expected version {saved_at} instead (seen by the saved-tensor hooks: the tensor was "
                           "changed in place after autograd saved it)")
    return copy.to(device)


REFERENCE = {"pack_hook": pack_hook, "unpack_hook": unpack_hook}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def hooks(pack: str, unpack: str, head: str = "import torch\n") -> str:
    body = "".join(f"    {line}\n" for line in pack.strip().splitlines())
    unbody = "".join(f"    {line}\n" for line in unpack.strip().splitlines())
    return f"{head}\n\ndef pack_hook(tensor):\n{body}\n\ndef unpack_hook(packed):\n{unbody}"


COUNTER = """
counter = tensor.detach()
counter.data = tensor.new_empty(0)
"""

CHECK = """
if counter._version != version:
    raise RuntimeError(f"a saved tensor was modified in place: version {counter._version}, saved at {version}")
"""

# The starter: what torch.autograd.graph.save_on_cpu does. On the CPU `.cpu()` is the tensor itself, and with
# hooks installed PyTorch skips its version check: no copy, no error, wrong gradients.
BROKEN = hooks("return tensor.device, tensor.cpu()", """
device, tensor = packed
return tensor.to(device)
""")

CORRECT = {
    "counter handle, copy on the CPU": hooks(COUNTER + """
return tensor.device, tensor.detach().to("cpu", copy=True), counter, tensor._version
""", """
device, copy, counter, version = packed
""" + CHECK + "return copy.to(device)"),
    "clone (pack runs with grad off), a dict": hooks("""
counter = tensor.detach()
counter.data = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
return {"copy": tensor.clone(), "counter": counter, "version": tensor._version}
""", """
if packed["counter"]._version != packed["version"]:
    raise RuntimeError("in-place modification of a saved tensor: it is at version "
                       f"{packed['counter']._version}, it was saved at version {packed['version']}")
return packed["copy"]
"""),
    "a class with slots, empty_like and copy_": hooks("""
return Packed(tensor)
""", """
return packed.unpack()
""", head='''import torch


class Packed:
    __slots__ = ("copy", "device", "counter", "version")

    def __init__(self, tensor):
        self.device, self.version = tensor.device, tensor._version
        self.copy = torch.empty_like(tensor, device="cpu").copy_(tensor.detach())
        self.counter = tensor.detach()
        self.counter.data = tensor.new_empty(0)

    def unpack(self):
        if self.counter._version != self.version:
            raise RuntimeError(f"a tensor saved for backward was modified in place (version {self.version} "
                               f"-> {self.counter._version})")
        return self.copy.to(self.device)
'''),
    "a NumPy copy": hooks(COUNTER + """
return tensor.device, tensor.detach().cpu().numpy().copy(), counter, tensor._version
""", """
device, array, counter, version = packed
""" + CHECK + "return torch.from_numpy(array).to(device)"),
    "PyTorch's wording, torch.empty(0) for the handle": hooks("""
counter = tensor.detach()
counter.data = torch.empty(0)
return tensor.detach().to("cpu", copy=True), tensor.device, (counter, tensor._version)
""", """
copy, device, (counter, version) = packed
if counter._version != version:
    raise RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                       f"operation: is at version {counter._version}; expected version {version} instead")
return copy.to(device)
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    "identity hooks": (hooks("return tensor", "return packed"), {"catches in-place", "packed"}),
    "save_on_cpu's own hooks": ("import torch\n\n_hooks = torch.autograd.graph.save_on_cpu()\n"
                                "pack_hook, unpack_hook = _hooks.pack_hook, _hooks.unpack_hook\n",
                                {"catches in-place", "packed"}),
    "keeps the tensor to read its version": (hooks("""
return tensor.detach().to("cpu", copy=True), tensor, tensor._version
""", """
copy, original, version = packed
if original._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return copy
"""), {"packed"}),
    "a detached alias, no copy": (hooks("return tensor.detach(), tensor._version", """
alias, version = packed
if alias._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return alias
"""), {"packed"}),
    "a copy, and a detached alias for the version": (hooks("""
return tensor.detach().clone(), tensor.detach(), tensor._version
""", """
copy, alias, version = packed
if alias._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return copy
"""), {"packed"}),
    "a registry of detached aliases": (hooks("""
key = len(_saved)
_saved[key] = tensor.detach(), tensor._version  # only the version is read from it
return key, tensor.detach().to("cpu", copy=True)
""", """
key, copy = packed
alias, version = _saved[key]
if alias._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return copy
""", head="import torch\n\n_saved = {}\n"), {"packed"}),
    "a view as the handle": (hooks("""
counter = tensor.view_as(tensor)
counter.data = tensor.new_empty(0)
return tensor.detach().to("cpu", copy=True), counter, tensor._version
""", """
copy, counter, version = packed
""" + CHECK + "return copy"), {"packed"}),
    "weak reference to the tensor": (hooks("""
return tensor.detach().clone(), weakref.ref(tensor), tensor._version
""", """
copy, ref, version = packed
original = ref()
if original is not None and original._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return copy
""", head="import weakref\n\nimport torch\n"), {"catches in-place"}),
    "checks the copy's version": (hooks("""
return tensor.detach().clone(), tensor._version
""", """
copy, version = packed
if copy._version != version:
    raise RuntimeError("a saved tensor was modified in place")
return copy
"""), {"catches in-place"}),
    "expects version 0": (hooks(COUNTER + "return tensor.detach().clone(), counter", """
copy, counter = packed
if counter._version != 0:
    raise RuntimeError("a saved tensor was modified in place")
return copy
"""), {"honest gradients"}),
    "checks at pack time only": (hooks("""
if tensor._version != 0:
    raise RuntimeError("a saved tensor was modified in place")
return tensor.detach().clone()
""", "return packed"), {"catches in-place", "honest gradients"}),
    "assert instead of RuntimeError": (hooks(COUNTER + """
return tensor.detach().clone(), counter, tensor._version
""", """
copy, counter, version = packed
assert counter._version == version, "a saved tensor was modified in place"
return copy
"""), {"catches in-place"}),
    "bfloat16 copy": (hooks(COUNTER + """
return tensor.dtype, tensor.detach().to(torch.bfloat16), counter, tensor._version
""", """
dtype, copy, counter, version = packed
""" + CHECK + "return copy.to(dtype)"), {"honest gradients", "round trip"}),
    "float64 copy kept as float64": (hooks(COUNTER + """
return tensor.detach().to(torch.float64, copy=True), counter, tensor._version
""", """
copy, counter, version = packed
""" + CHECK + "return copy"), {"round trip"}),
    "unpack frees the copy": (hooks(COUNTER + """
return {"copy": tensor.detach().clone(), "counter": counter, "version": tensor._version}
""", """
copy = packed.pop("copy")  # free the memory as soon as backward has it
if packed["counter"]._version != packed["version"]:
    raise RuntimeError("a saved tensor was modified in place")
return copy
"""), {"double use"}),
}

SAYS = {
    "weak reference to the tensor": ("backward ran without an error under your hooks",),
    "a copy, and a detached alias for the version": ("sharing the saved tensor's storage",),
    "a registry of detached aliases": ("still alive",),
    "save_on_cpu's own hooks": ("backward ran without an error under your hooks",),
    "assert instead of RuntimeError": ("not a RuntimeError",),
    "expects version 0": ("raise only when the version",),
}

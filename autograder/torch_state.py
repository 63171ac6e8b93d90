"""Torch's global state, as one table: every mode, flag and registry an answer can leave changed that would
change what the grader observes after it (a TorchFunctionMode entered and never left answers the scenario's
own `grad_fn` and `backward`; grad mode off leaves no graph; a default dtype of float64 changes every value).

`STATES` is the table, one row per piece of state: how to read it, how to put it back (None where torch
offers no way: it can only be refused), and which of torch's getters it covers. `capture()` reads every row,
`differing(baseline)` names the rows that differ from it, `restore(baseline)` puts back what it can and
names what it could not. The harness captures the state before the answer loads, puts it back after loading,
and compares it after each trial, in the answer's own thread (much of this state is thread-local); the guard
(runner/worker/guard.py) compares it after every step from the job's main thread, for the state the process shares.

`DECLARED` names torch's global setters and getters that are not rows, each with the reason it cannot change
an observation; tests/adversarial/test_global_state.py scans torch for getters and fails on one in neither.
Values are compared by equality for plain values (bool, int, float, str, None, dtype) and by identity for
anything else, so an object of the answer's cannot compare equal to the baseline by its own `__eq__`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy
import torch
from torch.utils._python_dispatch import _pop_mode as _pop_dispatch_mode

C: Any = torch._C


@dataclass(frozen=True)
class State:
    """One piece of torch's global state: `read` returns its value (plain values, or objects compared by
    identity); `put` puts a value `read` returned back in place (None: it cannot be put back, only refused);
    `getters`: the getters of torch's (module-qualified) whose state this row holds. Each function is bound
    when this module is imported, so an answer that rebinds torch._C's names changes no read; the guard
    compares each row's fields with its snapshot."""

    name: str
    read: Callable[[], Any]
    put: Callable[[Any], None] | None
    getters: tuple[str, ...] = ()


def _flag(name: str) -> State | None:
    """A flag torch keeps in C++, read with torch._C._get_NAME and set with torch._C._set_NAME (None where this
    build of torch has not both)."""
    getter, setter = getattr(C, f"_get_{name}", None), getattr(C, f"_set_{name}", None)
    if getter is None or setter is None:
        return None

    def put(value: Any) -> None:
        setter(*value) if type(value) is tuple else setter(value)  # (allowed, split-K allowed) for some

    return State(name, getter, put, (f"torch._C._get_{name}",))


_len_function_stack, _function_stack_at = C._len_torch_function_stack, C._get_function_stack_at
_pop_function_stack = C._pop_torch_function_stack
_len_dispatch_stack, _dispatch_stack_at = C._len_torch_dispatch_stack, C._get_dispatch_stack_at
_get_dispatch_mode, _set_dispatch_mode, _unset_dispatch_mode = (
    C._get_dispatch_mode, C._set_dispatch_mode, C._unset_dispatch_mode)
_INFRA_KEYS = tuple(C._TorchDispatchModeKey.__members__.values())


def _function_modes() -> tuple:
    return tuple(_function_stack_at(i) for i in range(_len_function_stack()))


def _put_function_modes(modes: tuple) -> None:
    for _ in range(10_000):
        if _len_function_stack() <= len(modes):
            break
        _pop_function_stack()


def _dispatch_modes() -> tuple:
    return tuple(_dispatch_stack_at(i) for i in range(_len_dispatch_stack()))


def _put_dispatch_modes(modes: tuple) -> None:
    for _ in range(10_000):
        if _len_dispatch_stack() <= len(modes):
            break
        _pop_dispatch_mode()  # which also takes the Python dispatch key out of the included set, with the last mode


def _infra_modes() -> tuple:
    return tuple(_get_dispatch_mode(key) for key in _INFRA_KEYS)


def _put_infra_modes(modes: tuple) -> None:
    for key, mode in zip(_INFRA_KEYS, modes):
        if _get_dispatch_mode(key) is not mode:
            if mode is None:
                _unset_dispatch_mode(key)
            else:  # pragma: no cover - the grader enters no infrastructure mode
                _set_dispatch_mode(mode)


_DEVICE_CONTEXT = torch._GLOBAL_DEVICE_CONTEXT
_set_default_device = torch.set_default_device


def _default_device() -> Any:
    return getattr(_DEVICE_CONTEXT, "device_context", None)


def _put_default_device(context: Any) -> None:
    if context is None:
        _set_default_device(None)
    else:  # pragma: no cover - the grader sets no default device
        _DEVICE_CONTEXT.device_context = context


_is_anomaly, _is_anomaly_nan, _set_anomaly = (
    torch.is_anomaly_enabled, torch.is_anomaly_check_nan_enabled, torch.set_anomaly_enabled)


def _anomaly() -> tuple:
    return _is_anomaly(), _is_anomaly_nan()


def _put_anomaly(value: tuple[bool, bool]) -> None:
    _set_anomaly(*value)


# Each device type torch keeps an autocast switch and dtype for (`is_autocast_enabled(device)`).
AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia")
_is_autocast, _autocast_dtype = torch.is_autocast_enabled, torch.get_autocast_dtype
_set_autocast, _set_autocast_dtype = torch.set_autocast_enabled, torch.set_autocast_dtype


def _autocast_devices() -> tuple[str, ...]:
    found = []
    for device in AUTOCAST_DEVICES:
        try:
            _is_autocast(device)
            _autocast_dtype(device)
        except (RuntimeError, TypeError, ValueError):
            continue
        found.append(device)
    return tuple(found)


_AUTOCAST = _autocast_devices()


def _autocast() -> tuple:
    return tuple((_is_autocast(d), _autocast_dtype(d)) for d in _AUTOCAST)


def _put_autocast(value: tuple) -> None:
    for device, (enabled, dtype) in zip(_AUTOCAST, value):
        _set_autocast(device, enabled)
        _set_autocast_dtype(device, dtype)


_are_deterministic, _deterministic_warn_only = (
    torch.are_deterministic_algorithms_enabled, torch.is_deterministic_algorithms_warn_only_enabled)
_use_deterministic = torch.use_deterministic_algorithms


def _deterministic() -> tuple:
    return _are_deterministic(), _deterministic_warn_only()


def _put_deterministic(value: tuple) -> None:
    _use_deterministic(value[0], warn_only=value[1])


_top_saved_hooks = C._autograd._top_saved_tensors_default_hooks
_pop_saved_hooks = C._autograd._pop_saved_tensors_default_hooks
_saved_hooks_enabled, _enable_saved_hooks = (
    C._autograd._saved_tensors_hooks_is_enabled, C._autograd._saved_tensors_hooks_enable)


def _saved_hooks() -> tuple:
    return _top_saved_hooks(True), _saved_hooks_enabled()


def _put_saved_hooks(value: tuple) -> None:
    top, enabled = value
    for _ in range(10_000):
        now = _top_saved_hooks(True)
        if now is None or (top is not None and _same(now, top)):
            break
        _pop_saved_hooks()
    if enabled:
        _enable_saved_hooks()


# torch's modules that keep global registries (`_global_*`): the hooks every nn.Module runs
# (register_module_forward_hook and its kin) and every optimizer's step runs (register_optimizer_step_pre_hook).
REGISTRY_MODULES = ("torch.nn.modules.module", "torch.optim.optimizer")


def _registry(module: ModuleType, name: str) -> State:
    """One of a module's global registries: the object in place, and what it holds."""

    def read() -> Any:
        value = getattr(module, name)
        return (value, tuple(value.items())) if isinstance(value, dict) else (value, ())

    def put(value: Any) -> None:
        registry, items = value
        setattr(module, name, registry)
        if isinstance(registry, dict):
            registry.clear()
            registry.update(items)

    return State(f"{module.__name__}.{name}", read, put)


def _registries() -> list[State]:
    import torch.optim.optimizer  # noqa: F401 - torch imports it; named here for the table

    return [_registry(sys.modules[module], name) for module in REGISTRY_MODULES
            for name in sorted(vars(sys.modules[module])) if name.startswith("_global_")]


_flush = torch.set_flush_denormal


def _set_flush_denormal(value: bool) -> None:
    _flush(value)


def _flush_denormal() -> bool:
    """Whether this thread flushes denormal numbers (torch.set_flush_denormal, which has no getter): numpy's
    arithmetic, which no torch mode reaches, on a denormal float32."""
    return bool((_TINY * _ONE)[0] == 0.0)


_TINY, _ONE = numpy.array([1e-39], dtype=numpy.float32), numpy.float32(1.0)
_FORWARD_AD = sys.modules["torch.autograd.forward_ad"]
_exit_dual_level = _FORWARD_AD.exit_dual_level
_is_fwd_grad, _set_fwd_grad = C._is_fwd_grad_enabled, C._set_fwd_grad_enabled


def _forward_ad() -> tuple:
    return _FORWARD_AD._current_level, _is_fwd_grad()


def _put_forward_ad(value: tuple) -> None:
    level, enabled = value
    for _ in range(10_000):
        if _FORWARD_AD._current_level <= level:
            break
        _exit_dual_level()
    _set_fwd_grad(enabled)


_PRINT_OPTS = torch._tensor_str.PRINT_OPTS


def _print_options() -> tuple:
    return tuple(sorted(vars(_PRINT_OPTS).items()))


def _put_print_options(value: tuple) -> None:
    vars(_PRINT_OPTS).clear()
    vars(_PRINT_OPTS).update(value)


_include_set, _exclude_set = C._dispatch_tls_local_include_set, C._dispatch_tls_local_exclude_set
_functorch_level = C._functorch.maybe_current_level


_set_included, _set_excluded = C._dispatch_tls_set_dispatch_key_included, C._dispatch_tls_set_dispatch_key_excluded
_KEYS = C.DispatchKey


def _include() -> str:
    return str(_include_set())


def _exclude() -> str:
    return str(_exclude_set())


def _keys(text: str) -> set[str]:
    """The names in a DispatchKeySet's text: `DispatchKeySet(BackendSelect, ADInplaceOrView)`."""
    inside = text.partition("(")[2].rpartition(")")[0]
    return {name.strip() for name in inside.split(",") if name.strip()}


def _put_keys(read: Callable[[], str], put: Callable[[Any, bool], None]) -> Callable[[str], None]:
    def put_back(text: str) -> None:
        now, then = _keys(read()), _keys(text)
        for name in now - then:
            put(getattr(_KEYS, name), False)
        for name in then - now:
            put(getattr(_KEYS, name), True)

    return put_back


# torch._C's flags with a _get_ and a _set_ of their own (torch.backends.* and its kin).
_FLAGS = ("autograd_fallback_mode", "deterministic_fill_uninitialized_memory", "cudnn_enabled", "cudnn_benchmark",
          "cudnn_deterministic", "cudnn_allow_tf32", "cublas_allow_tf32",
          "cublas_allow_fp16_reduced_precision_reduction", "cublas_allow_bf16_reduced_precision_reduction",
          "cublas_allow_fp16_accumulation",
          "cpu_allow_fp16_reduced_precision_reduction", "mkldnn_enabled", "mkldnn_deterministic", "nnpack_enabled",
          "onednn_allow_tf32", "math_sdp_allow_fp16_bf16_reduction", "sdp_priority_order", "qengine",
          "cudnn_depthwise_kernel", "miopen_immediate", "sm_carveout_experimental", "backcompat_broadcast_warn",
          "backcompat_keepdim_warn", "graph_executor_optimize")
# The kernels of scaled_dot_product_attention, each with a switch (torch.backends.cuda.enable_*_sdp).
_SDP = ("flash", "mem_efficient", "math", "cudnn", "overrideable", "fa3")

# The table. A new piece of global state is one more row (and tests/adversarial/test_global_state.py one
# more way to change it).
STATES: tuple[State, ...] = tuple(state for state in (
    # put back in this order: the default device is a TorchFunctionMode of torch's, left by set_default_device
    State("torch.set_default_device", _default_device, _put_default_device,
          ("torch.get_default_device", "torch._C._get_default_device")),
    State("TorchFunctionMode stack", _function_modes, _put_function_modes,
          ("torch._C._get_function_stack_at", "torch._C._is_torch_function_mode_enabled")),
    State("DisableTorchFunction", C._get_torch_function_state, C._set_torch_function_state,
          ("torch._C._get_torch_function_state", "torch._C._is_torch_function_enabled")),
    State("TorchDispatchMode stack", _dispatch_modes, _put_dispatch_modes, ("torch._C._get_dispatch_stack_at",)),
    State("torch._C._set_dispatch_mode", _infra_modes, _put_infra_modes, ("torch._C._get_dispatch_mode",)),
    State("grad mode", C.is_grad_enabled, C._set_grad_enabled, ("torch.is_grad_enabled", "torch._C.is_grad_enabled")),
    State("anomaly mode", _anomaly, _put_anomaly,
          ("torch.is_anomaly_enabled", "torch.is_anomaly_check_nan_enabled", "torch._C.is_anomaly_enabled",
           "torch._C.is_anomaly_check_nan_enabled")),
    State("default dtype", C.get_default_dtype, C._set_default_dtype,
          ("torch.get_default_dtype", "torch._C.get_default_dtype")),
    State("autocast", _autocast, _put_autocast,
          ("torch.is_autocast_enabled", "torch.get_autocast_dtype", "torch.is_autocast_cpu_enabled",
           "torch.get_autocast_cpu_dtype", "torch.get_autocast_gpu_dtype", "torch.is_autocast_ipu_enabled",
           "torch.get_autocast_ipu_dtype", "torch.is_autocast_xla_enabled", "torch.get_autocast_xla_dtype",
           "torch._C._is_any_autocast_enabled", "torch._C.is_autocast_enabled", "torch._C.get_autocast_dtype",
           "torch._C.is_autocast_cpu_enabled", "torch._C.get_autocast_cpu_dtype", "torch._C.get_autocast_gpu_dtype",
           "torch._C.is_autocast_ipu_enabled", "torch._C.get_autocast_ipu_dtype", "torch._C.is_autocast_xla_enabled",
           "torch._C.get_autocast_xla_dtype")),
    State("autocast cache", C.is_autocast_cache_enabled, C.set_autocast_cache_enabled,
          ("torch.is_autocast_cache_enabled", "torch._C.is_autocast_cache_enabled")),
    State("deterministic algorithms", _deterministic, _put_deterministic,
          ("torch.are_deterministic_algorithms_enabled", "torch.is_deterministic_algorithms_warn_only_enabled",
           "torch.get_deterministic_debug_mode", "torch._C._get_deterministic_algorithms",
           "torch._C._get_deterministic_algorithms_warn_only")),
    State("saved_tensors_hooks", _saved_hooks, _put_saved_hooks,
          ("torch._C._autograd._top_saved_tensors_default_hooks",
           "torch._C._autograd._saved_tensors_hooks_is_enabled")),
    State("forward AD", _forward_ad, _put_forward_ad, ("torch._C._is_fwd_grad_enabled",)),
    State("torch.set_num_threads", C.get_num_threads, C.set_num_threads, ("torch.get_num_threads",
                                                                       "torch._C.get_num_threads")),
    State("flush denormal", _flush_denormal, _set_flush_denormal),
    State("print options", _print_options, _put_print_options),
    State("torch.set_float32_matmul_precision", C._get_float32_matmul_precision, C._set_float32_matmul_precision,
          ("torch.get_float32_matmul_precision", "torch._C._get_float32_matmul_precision",
           "torch._C._get_fp32_precision_getter")),
    State("JIT tracing", C._get_tracing_state, C._set_tracing_state, ("torch._C._get_tracing_state",
                                                                       "torch._C._get_value_trace")),
    State("autograd multithreading", C._is_multithreading_enabled, C._set_multithreading_enabled,
          ("torch._C._is_multithreading_enabled",)),
    State("view replay", C._is_view_replay_enabled, C._set_view_replay_enabled, ("torch._C._is_view_replay_enabled",)),
    State("grad_layout_enforcement", C._is_grad_layout_enforcement_enabled, C._set_grad_layout_enforcement_enabled,
          ("torch._C._is_grad_layout_enforcement_enabled",)),
    State("warn always", C._get_warnAlways, C._set_warnAlways, ("torch.is_warn_always_enabled",
                                                                 "torch._C._get_warnAlways")),
    *(_flag(name) for name in _FLAGS),
    *(State(f"{kind} attention", getattr(C, f"_get_{kind}_sdp_enabled"), getattr(C, f"_set_sdp_use_{kind}"),
            (f"torch._C._get_{kind}_sdp_enabled",))
      for kind in _SDP if hasattr(C, f"_set_sdp_use_{kind}")),
    *_registries(),
    # torch has no setter for these: an answer that leaves them changed is refused
    State("inference mode", C.is_inference_mode_enabled, None,
          ("torch.is_inference_mode_enabled", "torch._C.is_inference_mode_enabled")),
    State("included DispatchKeys", _include, _put_keys(_include, _set_included),
          ("torch._C._dispatch_tls_local_include_set", "torch._C._dispatch_tls_is_dispatch_key_included")),
    State("excluded DispatchKeys", _exclude, _put_keys(_exclude, _set_excluded),
          ("torch._C._dispatch_tls_local_exclude_set", "torch._C._dispatch_tls_is_dispatch_key_excluded")),
    State("functorch transforms", _functorch_level, None, ("torch._C._functorch.maybe_current_level",)),
) if state is not None)

# Getters of torch's with a setter beside them that are not rows, and why they cannot change what the grader
# observes (the scan in tests/adversarial/test_global_state.py requires each getter it finds to be here or in a
# row's `getters`).
DECLARED: dict[str, str] = {
    "torch.get_rng_state": "the harness seeds torch (every device's generator) at the start of each trial",
    "torch._C.get_num_interop_threads": "set once per process, before any parallel work: the template's did",
    "torch._is_device_backend_autoload_enabled": "read from the environment once, when torch is imported",
    "torch._C._is_xnnpack_enabled": "a property of torch's build, with no setter",
    "torch._C._autograd._get_creation_meta": "a tensor's, not a global",
    "torch.get_num_interop_threads": "set once per process, before any parallel work: the template's did",
    "torch.get_device": "a tensor's device, not a global",
    "torch.get_device_module": "a lookup, not a global",
    "torch.get_file_path": "a path, not a global",
    "torch._C._get_thread_name": "a thread's name changes no value",
    "torch._C._get_tensor_metadata": "a tensor's, not a global",
    "torch._C._get_graph_exec_group": "TorchScript graph executor bookkeeping: no eager op reads it",
    "torch._C._get_dtensor_allow_implicit_replication": "DTensor only: no exercise uses distributed tensors",
    "torch._C._get_obj_in_tls": "a per-thread store for subclasses (DTensor), not read by eager autograd",
    "torch._C._get_linalg_preferred_backend": (
        "which CUDA library runs linalg operations (cuSOLVER or MAGMA): no scenario runs one, and it costs 0.5 ms"
        " to read"),
    "torch._C._get_blas_preferred_backend": "which CUDA library runs matrix products (cuBLAS or cuBLASLt)",
    "torch._C._get_rocm_fa_preferred_backend": "ROCm's flash attention: no scenario runs attention on ROCm",
}


_PLAIN = (bool, int, float, str, type(None), torch.dtype)
_UNREADABLE = "(unreadable)"


def _same(a: Any, b: Any) -> bool:
    """Equal where both are plain values (or tuples or lists of them, or values of one of torch's C++ enums),
    identical otherwise: an answer's object cannot answer for itself."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is tuple or kind is list:
        return len(a) == len(b) and all(map(_same, a, b))
    if kind in _PLAIN:
        return bool(a == b)
    if kind.__module__ == "torch._C" and hasattr(kind, "__members__"):  # a pybind11 enum: a fresh object each read
        return int(a) == int(b)
    return False


def _read(state: State) -> Any:
    try:
        return state.read()
    except (RuntimeError, TypeError, ValueError, AttributeError):  # a build without that backend
        return _UNREADABLE


Snapshot = tuple


def capture() -> Snapshot:
    """Every row's value, in STATES's order."""
    return tuple(map(_read, STATES))


def differing(baseline: Snapshot) -> list[str]:
    """The names of the rows whose value is no longer the baseline's."""
    return [state.name for state, then in zip(STATES, baseline) if not _same(_read(state), then)]


def restore(baseline: Snapshot) -> list[str]:
    """Puts back every row that differs from the baseline; the names of those that still differ (no setter,
    or one that failed)."""
    for state, then in zip(STATES, baseline):
        if state.put is not None and then is not _UNREADABLE and not _same(_read(state), then):
            try:
                state.put(then)
            except (RuntimeError, TypeError, ValueError, AttributeError):
                pass
    return differing(baseline)

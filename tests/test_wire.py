"""The wire: what a worker sends comes back as plain values, and a forged or broken frame is refused; the
framing of the worker's pipes reads exactly what it is told."""

import json
import os

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from autograder.core.outcome import ErrorInfo, Outcome, RunReport, Trial
from autograder.runner.fdio import frame, read_exactly, read_frame, split_frame
from autograder.runner.wire import (
    MAGIC,
    WireError,
    decode_inputs,
    decode_job,
    decode_report,
    encode_inputs,
    encode_job,
    encode_report,
    pack,
)

TRIALS = (Trial("train", "float32", "cpu"), Trial("eval", "float64", "cpu"))


class Liar(torch.Tensor):
    """A tensor subclass that claims to equal everything."""

    def __eq__(self, other):
        return True


def test_job_round_trip_leaves_the_hidden_inputs_out():
    inputs = {"train/float32": {"x": torch.randn(2, 3), "channels": 4, "flag": True},
              "eval/float64": {"x": torch.randn(2, 3, dtype=torch.float64)}}
    exercise, code, trials, back, hidden = decode_job(encode_job("residual_add", "code", TRIALS, inputs,
                                                                 frozenset({"eval/float64"})))
    assert (exercise, code, trials, hidden) == ("residual_add", "code", TRIALS, {"eval/float64"})
    assert set(back) == {"train/float32"}
    assert torch.equal(back["train/float32"]["x"], inputs["train/float32"]["x"])
    assert back["train/float32"]["channels"] == 4 and back["train/float32"]["flag"] is True
    later = decode_inputs(encode_inputs({"eval/float64": inputs["eval/float64"]}))
    assert torch.equal(later["eval/float64"]["x"], inputs["eval/float64"]["x"])


def test_report_round_trip_gives_plain_tensors():
    liar = torch.randn(3).as_subclass(Liar)
    report = RunReport(outcomes={
        TRIALS[0].key: Outcome({"y": liar, "ok": True, "n": 3, "s": "text", "b": torch.ones(2, dtype=torch.bfloat16),
                                "empty": torch.zeros(0, 3), "strided": torch.arange(6.0)[::2]}),
        TRIALS[1].key: Outcome({}, ErrorInfo("RuntimeError", "boom", 4, "y += 1")),
    })
    back = decode_report(encode_report(report), TRIALS)
    values = back.outcomes[TRIALS[0].key].values
    assert type(values["y"]) is torch.Tensor and torch.equal(values["y"], liar.as_subclass(torch.Tensor))
    assert values["b"].dtype == torch.bfloat16 and values["empty"].shape == (0, 3)
    assert torch.equal(values["strided"], torch.tensor([0.0, 2.0, 4.0]))
    assert values["ok"] is True
    assert back.outcomes[TRIALS[1].key].error == ErrorInfo("RuntimeError", "boom", 4, "y += 1")


def _frame(data) -> bytes:
    return pack(data, {})


@pytest.mark.parametrize("frame", [
    _frame({"outcomes": {"other/float32/cpu": {"values": {}}}}),             # a trial nobody asked for
    _frame({"outcomes": {TRIALS[0].key: {"values": {"y": [1, 2]}}}}),        # not a scalar
    _frame({"outcomes": {TRIALS[0].key: {"values": {"y": None}}}}),          # not an observation
    _frame({"outcomes": {TRIALS[0].key: {"values": {}, "error": {"type": 1}}}}),
    _frame({"outcomes": {TRIALS[0].key: {"values": [1]}}}),                  # values not an object
    _frame({"outcomes": {TRIALS[0].key: {"scalars": {}}}}),                  # a key no outcome has
    _frame({"outcomes": {TRIALS[0].key: {"values": {"y": {"tensor": "t"}}}}}),  # a tensor that is not there
    pack({"outcomes": {TRIALS[0].key: {"values": {"y": {"tensor": "t"}, "z": {"tensor": "t"}}}}},
         {"t": torch.ones(1)}),                                                # one tensor, two values
    pack({"outcomes": {TRIALS[0].key: {"values": {}}}}, {"t": torch.ones(1)}),  # a tensor of no value
    pack({"outcomes": {TRIALS[0].key: {"values": {"y": {"tensor": "t", "x": 1}}}}}, {"t": torch.ones(1)}),
    _frame({"load_error": {"type": "E", "message": "m", "culprit": {"x": [[[[]]]] * 10**4}}}),  # a huge culprit
    _frame([1, 2, 3]),
    MAGIC + (2**31).to_bytes(4, "little") + b"{}",                             # a length past the end
    MAGIC + (10).to_bytes(4, "little") + b"[" * 10 + b"\0" * 8,               # not JSON
    MAGIC + (200_000).to_bytes(4, "little") + b"[" * 200_000 + b"\0" * 8,     # nested past any recursion limit
    b"\x80\x04\x95" + b"\0" * 20,                                              # a pickle
    _frame({})[:-8] + b"\xff" * 8,                                             # tensors cut short
])
def test_forged_or_broken_frames_are_refused(frame):
    with pytest.raises(WireError):
        decode_report(frame, TRIALS)


def test_pickles_are_not_read():
    """A worker that sends torch.save's pickle instead of safetensors gets refused, never unpickled."""
    import io

    buffer = io.BytesIO()
    torch.save({"y": torch.ones(1)}, buffer)
    text = json.dumps({}).encode()
    with pytest.raises(WireError):
        decode_report(MAGIC + len(text).to_bytes(4, "little") + text + buffer.getvalue(), TRIALS)


@given(st.binary(max_size=4096), st.binary(max_size=64))
def test_a_frame_holds_its_bytes_and_nothing_after_them(data, after):
    """The one framing of the worker's pipes (fdio): a length, then the bytes; what follows is left alone."""
    assert split_frame(frame(data) + after) == (data, after)
    read, write = os.pipe()
    try:
        os.write(write, frame(data) + after)
        assert read_frame(read, len(data)) == data
        assert read_exactly(read, len(after)) == after  # not one byte more was read
    finally:
        os.close(read)
        os.close(write)


def test_frames_too_long_or_cut_short_are_refused():
    read, write = os.pipe()
    try:
        os.write(write, frame(b"x" * 10))
        assert read_frame(read, 9) is None  # over the limit: refused before its bytes are read
        assert read_exactly(read, 10) == b"x" * 10
        os.write(write, frame(b"abc")[:-1])
        os.close(write)
        write = None
        assert read_frame(read, 100) is None  # the pipe ends first
    finally:
        os.close(read)
        if write is not None:
            os.close(write)
    assert split_frame(frame(b"abc")[:-1]) is None and split_frame(b"\x01") is None


def test_the_codec_writes_what_safetensors_writes_byte_for_byte():
    """The wire and the shipped public data share one writer (codec.tensor_bytes, free of ctypes), and it lays
    a blob out exactly as safetensors' own: the shipped files stay byte-identical."""
    from safetensors.torch import save

    from autograder.codec import tensor_bytes

    tensors = {name: torch.ones(2, 3).to(dtype) for name, dtype in zip("abcdefghij", (
        torch.bool, torch.bfloat16, torch.int32, torch.float16, torch.uint8, torch.int8, torch.int16, torch.float64,
        torch.int64, torch.float32))}
    tensors["empty"] = torch.zeros(0, 3)
    assert tensor_bytes(tensors) == save(tensors)


def test_inputs_and_expected_outcomes_are_coded_alike_on_the_wire_and_in_the_public_data():
    from autograder.codec import TENSOR, decode_values, encode_values

    tensors: dict[str, torch.Tensor] = {}
    values = {"x": torch.randn(2), "lr": 0.1, "name": "adam", "none": None}
    coded = encode_values(values, "inputs/train/float32", tensors)
    assert coded["x"] == {TENSOR: "inputs/train/float32/x"} and coded["lr"] == 0.1
    used: set[str] = set()
    back = decode_values(json.loads(json.dumps(coded)), tensors, used)
    assert torch.equal(back["x"], values["x"]) and back["none"] is None and used == set(tensors)

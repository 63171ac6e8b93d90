"""The wire: what a worker writes comes back as plain values, and a forged report is refused."""

import json

import pytest
import torch

from autograder.outcome import ErrorInfo, Outcome, RunReport, Trial
from autograder.runner.wire import WireError, read_job, read_report, write_job, write_report

TRIALS = (Trial("train", "float32", "cpu"), Trial("eval", "float64", "cpu"))


class Liar(torch.Tensor):
    """A tensor subclass that claims to equal everything."""

    def __eq__(self, other):
        return True


def test_job_round_trip(tmp_path):
    inputs = {"train/float32": {"x": torch.randn(2, 3), "channels": 4, "flag": True}}
    write_job(tmp_path, "residual_add", "code", TRIALS, inputs)
    exercise, code, trials, back = read_job(tmp_path)
    assert (exercise, code, trials) == ("residual_add", "code", TRIALS)
    assert torch.equal(back["train/float32"]["x"], inputs["train/float32"]["x"])
    assert back["train/float32"]["channels"] == 4 and back["train/float32"]["flag"] is True


def test_report_round_trip_gives_plain_tensors(tmp_path):
    liar = torch.randn(3).as_subclass(Liar)
    report = RunReport(outcomes={
        TRIALS[0].key: Outcome({"y": liar, "ok": True, "n": 3, "s": "text"}, None, 0.5),
        TRIALS[1].key: Outcome({}, ErrorInfo("RuntimeError", "boom", 4, "y += 1"), 0.1),
    })
    write_report(tmp_path, report)
    back = read_report(tmp_path, TRIALS)
    y = back.outcomes[TRIALS[0].key].values["y"]
    assert type(y) is torch.Tensor and torch.equal(y, liar.as_subclass(torch.Tensor))
    assert back.outcomes[TRIALS[0].key].values["ok"] is True
    assert back.outcomes[TRIALS[1].key].error == ErrorInfo("RuntimeError", "boom", 4, "y += 1")


def _forge(tmp_path, data):
    write_report(tmp_path, RunReport())
    (tmp_path / "report.json").write_text(json.dumps(data))


@pytest.mark.parametrize("data", [
    {"outcomes": {"other/float32/cpu": {"scalars": {}}}},           # a trial nobody asked for
    {"outcomes": {TRIALS[0].key: {"scalars": {"y": [1, 2]}}}},       # not a scalar
    {"outcomes": {TRIALS[0].key: {"scalars": {}, "error": {"type": 1}}}},
    [1, 2, 3],
])
def test_forged_reports_are_refused(tmp_path, data):
    _forge(tmp_path, data)
    with pytest.raises(WireError):
        read_report(tmp_path, TRIALS)


def test_missing_or_corrupt_files_are_refused(tmp_path):
    with pytest.raises(WireError, match="no report"):
        read_report(tmp_path, TRIALS)
    write_report(tmp_path, RunReport())
    (tmp_path / "observations.safetensors").write_bytes(b"\x00" * 20)
    with pytest.raises(WireError, match="cannot be read"):
        read_report(tmp_path, TRIALS)


def test_pickles_are_not_read(tmp_path):
    """A worker that writes a pickle instead of safetensors gets refused, never unpickled."""
    write_report(tmp_path, RunReport())
    torch.save({"y": torch.ones(1)}, tmp_path / "observations.safetensors")
    with pytest.raises(WireError):
        read_report(tmp_path, TRIALS)

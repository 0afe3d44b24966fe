"""The fix's optimizer line, written for the optimizers the trace shows stepping."""

from __future__ import annotations

from jupyter_gpuprof.advice.fixes import LAUNCH
from jupyter_gpuprof.advice.patterns import fit_optimizer


def optimizer_lines(fix: str) -> list[str]:
    return [ln for ln in fix.splitlines() if "torch.optim." in ln]


def test_an_optimizer_torch_can_fuse_is_fused_in_its_own_class():
    assert optimizer_lines(fit_optimizer(LAUNCH, ["SGD"])) == [
        "opt = torch.optim.SGD(params, ..., fused=True)   # your SGD, its step in a few launches"]


def test_one_it_cannot_fuse_gets_foreach():
    (line,) = optimizer_lines(fit_optimizer(LAUNCH, ["RMSprop"]))
    assert line.startswith("opt = torch.optim.RMSprop(params, ..., foreach=True)")


def test_each_optimizer_class_gets_its_line_and_none_gets_none():
    assert [ln.split("(")[0] for ln in optimizer_lines(fit_optimizer(LAUNCH, ["Adam", "SGD"]))] \
        == ["opt = torch.optim.Adam", "opt = torch.optim.SGD"]
    assert optimizer_lines(fit_optimizer(LAUNCH, [])) == []
    assert fit_optimizer("x = 1", ["SGD"]) == "x = 1"  # a fix without the line is untouched

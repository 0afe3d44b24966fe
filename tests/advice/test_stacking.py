"""Stacking: the best fix kept first, the others tried on top, reverted on noise or losses."""

import contextlib
import time

import pytest

from jupyter_gpuprof.advice.fix_table import stack_name, stack_parts
from jupyter_gpuprof.advice.stacking import (
    LOSS_TOLERANCE,
    judge_added,
    loss_problem,
    plan,
    stack_block,
    stack_code,
)
from jupyter_gpuprof.advice.tries import judge_tries
from jupyter_gpuprof.tries.notebook import parse_fixes, run_tries
from jupyter_gpuprof.tries.stacking import in_kernel, stack_fixes


def _try(fix, gain, significant=True, loss=0.0, error=None, ms=(10.0,) * 8):
    if error:
        return {"fix": fix, "error": error}
    return {"fix": fix, "step_ms": list(ms), "measured_gain_pct": gain, "loss_rel_diff": loss,
            "change": {"significant": significant, "verdict": "significant" if significant
                       else "noise"}}


def test_the_best_significant_fix_is_kept_first_and_the_others_ordered_by_gain():
    p = plan([_try("amp", 12.0), _try("loader", 40.0), _try("tf32", 3.0, significant=False)])
    assert p.base["fix"] == "loader"
    assert p.candidates == ["amp", "tf32"]  # a fix without a gain alone may still help on top


def test_a_fix_whose_losses_moved_is_never_kept_first():
    p = plan([_try("amp", 50.0, loss=2 * LOSS_TOLERANCE), _try("loader", 20.0)])
    assert p.base["fix"] == "loader"
    assert p.candidates == [] and any(s.startswith("amp: its first losses moved")
                                      for s in p.skipped)


def test_fixes_of_one_family_replace_each_other_and_crashed_ones_are_left_out():
    p = plan([_try("compile", 30.0), _try("graphs", 20.0), _try("loader", 10.0),
              _try("amp", 0, error="RuntimeError: boom")])
    assert p.base["fix"] == "compile" and p.candidates == ["loader"]
    assert "graphs: replaces compile, which measured faster alone" in p.skipped
    assert "amp: crashed alone" in p.skipped


def test_nothing_is_stacked_without_a_significant_gain_alone():
    p = plan([_try("amp", 30.0, significant=False), _try("loader", -5.0)])
    assert p.base is None and p.why_none


def test_loss_problem_states_the_tolerance():
    assert loss_problem({"loss_rel_diff": LOSS_TOLERANCE / 2}) is None
    assert "tolerance 5%" in loss_problem({"loss_rel_diff": LOSS_TOLERANCE * 2})


def _rounds(ms):
    return {"step_ms": [ms] * 16, "round_ms": [ms] * 8}


def test_a_fix_on_top_is_kept_only_when_significantly_faster_with_the_losses_held():
    ref = {"fix": "loader", **_rounds(10.0)}
    faster = judge_added(ref, {"fix": "loader+amp", **_rounds(8.0), "loss_rel_diff": 0.001},
                         ["loader"], "amp")
    assert faster["kept"] and faster["why"].startswith("kept: 20.0% faster on top of loader")
    same = judge_added(ref, {"fix": "loader+amp", **_rounds(10.0)}, ["loader"], "amp")
    assert not same["kept"] and "not a significant gain" in same["why"]
    lossy = judge_added(ref, {"fix": "loader+amp", **_rounds(8.0), "loss_rel_diff": 0.2},
                        ["loader"], "amp")
    assert not lossy["kept"] and "first losses moved 20.00%" in lossy["why"]
    crashed = judge_added(ref, {"fix": "loader+amp", "error": "RuntimeError: x"}, ["loader"],
                          "amp")
    assert not crashed["kept"] and crashed["why"] == "reverted: crashed on top of loader"


def test_the_code_block_applies_every_kept_fix_in_the_loop_that_ran():
    code = stack_code(["loader", "graphs"], {"optimizers_per_step": 2, "compiled_graphs": 3})
    assert code.index("DataLoader(") < code.index('mode="reduce-overhead"')
    assert "in place of your torch.compile(model)" in code
    assert "cudagraph_mark_step_begin()   # once per iteration" in code
    assert "cudagraph_mark_step_begin" not in stack_code(["graphs"], {})
    compile(code.replace("...", "x"), "<stack>", "exec")  # one block of valid Python


def test_the_stack_is_priced_against_the_control():
    p = plan([_try("loader", 50.0, ms=[10.0] * 8), _try("amp", 10.0)])
    last = {"fix": "loader+amp", "step_ms": [8.0] * 8}
    out = stack_block({"fix": "none", "step_ms": [20.0] * 8}, p, [
        {"fix": "loader+amp", "added": "amp", "kept": True}], last, None)
    assert out["fixes"] == ["loader", "amp"]
    assert out["gain_pct"] == pytest.approx(60.0) and out["median_ms"] == pytest.approx(8.0)


def test_stack_names_are_tries_of_their_own():
    assert stack_parts(stack_name(["loader", "graphs"])) == ["loader", "graphs"]
    assert parse_fixes("loader+graphs,amp", []) == ["loader+graphs", "amp"]
    with pytest.raises(ValueError, match="unknown fix bogus"):
        parse_fixes("loader+bogus", [])


#: what each fake fix takes off a 24 ms step (ms); "tf32" nothing
SAVES = {"loader": 10.0, "amp": 5.0, "tf32": 0.0}


@contextlib.contextmanager
def _fake(fix, ns, step, cuda):
    """A fix that shortens the sleeping step by SAVES of each of its parts."""
    def fixed():
        ns["pause"] = 0.024 - sum(SAVES[p] for p in stack_parts(fix)) / 1e3
        time.sleep(ns["pause"])

    yield fixed


def test_in_the_kernel_the_stack_keeps_what_helps_on_top_and_reverts_what_does_not():
    ns = {"pause": 0.024}

    def step():
        time.sleep(0.024)

    # 40 steps: each of the 8 rounds is a median of 5, so a host hiccup (a sleep overrun of a
    # few ms on a busy CI machine) cannot flip a round, and the sign test needs all 8
    control, raw = run_tries(step, ns, list(SAVES), warmup=1, steps=40, apply=_fake)
    judged = judge_tries(raw, [24.0] * 40, None, [], control)
    said = []
    stack = stack_fixes(judged, control, in_kernel(step, ns, 1, 40, apply=_fake), None,
                        said.append)
    assert stack["fixes"] == ["loader", "amp"]
    assert [s["fix"] for s in stack["steps"]] == ["loader+amp", "loader+amp+tf32"]
    assert [s["kept"] for s in stack["steps"]] == [True, False]
    assert stack["gain_pct"] == pytest.approx(100 * 15 / 24, abs=6)
    assert "stack: amp on top of loader" in said

"""The memory fixes offer checkpoint and amp to `--try`; their tries carry the peak against the
control's beside the predicted saving, and the text says what was measured (never 0 on a CPU)."""

from __future__ import annotations

import msgspec
from memory_recordings import history, known, one_kernel_forward

from jupyter_gpuprof.advice.fix_table import BY_NAME
from jupyter_gpuprof.advice.memory_fixes import memory_fixes
from jupyter_gpuprof.advice.tries import judge_tries, memory_offers
from jupyter_gpuprof.analysis.memory_step import memory_step
from jupyter_gpuprof.report.memory_summary import _fixes
from jupyter_gpuprof.tries import notebook
from jupyter_gpuprof.views.memory_text import over_step_lines
from jupyter_gpuprof.views.whatif_text import try_lines

GB = 10**9


def _memory_block() -> dict:
    """The summary's `memory` block as JSON, its fixes priced from the GPT-2 recording."""
    step = memory_step(history("gpt2"), known("gpt2"))
    fixes = msgspec.to_builtins(_fixes(memory_fixes(step, forward=one_kernel_forward(5.0),
                                                    activation_dtype_bytes=4)))
    return {"over_step": {"peak_bytes": step.peak_bytes, "peak_phase": "backward", "kinds": [],
                          "lines": [], "modules": [], "reserved_bytes": step.peak_bytes,
                          "fixes": fixes, "headroom_x": None, "known_addresses": True}}


def test_the_memory_finding_offers_checkpoint_and_amp_in_its_data():
    fixes = {f["id"]: f for f in _memory_block()["over_step"]["fixes"]}
    assert fixes["checkpointing"]["try_fix"] == "checkpoint"
    assert fixes["autocast"]["try_fix"] == "amp"
    assert fixes["micro_batches"]["try_fix"] is None  # needs the loop edited: no try
    offers = memory_offers(_memory_block())
    assert offers == {"checkpoint": fixes["checkpointing"]["saves_bytes"],
                      "amp": fixes["autocast"]["saves_bytes"]}
    assert set(offers) <= set(BY_NAME)  # each offer is a fix `--try` can apply
    assert memory_offers(None) == {} and memory_offers({"over_step": None}) == {}


def _try(fix: str, ms: float, peak: int | None) -> dict:
    return {"fix": fix, "step_ms": [ms * (1 + 0.001 * i) for i in range(8)],
            "round_ms": [ms] * 8, "peak_memory_bytes": peak}


def test_a_memory_fix_s_try_carries_its_peak_against_the_control_s():
    offers = {"checkpoint": 3 * GB, "amp": 1 * GB}
    control = _try("none", 10.0, 8 * GB)
    raw = [_try("checkpoint", 12.0, 5 * GB), _try("amp", 8.0, 7 * GB), _try("tf32", 9.0, 8 * GB)]
    by = {t["fix"]: t for t in judge_tries(raw, [], None, [], control, offers)}
    ck = by["checkpoint"]["memory"]
    assert ck["change_bytes"] == -3 * GB and ck["predicted_change_bytes"] == -3 * GB
    assert ck["peak_bytes"] == 5 * GB and ck["control_peak_bytes"] == 8 * GB
    assert abs(ck["step_time_change_pct"] - 20.0) < 0.5  # slower: one more forward
    assert by["amp"]["memory"]["change_bytes"] == -1 * GB
    assert "memory" not in by["tf32"]  # no memory fix offered it
    # checkpoint measures no verdict finding, even where no memory fix offered it
    (alone,) = judge_tries([_try("checkpoint", 12.0, 5 * GB)], [], None, [], control)
    assert alone["memory"]["predicted_change_bytes"] is None
    assert alone["memory"]["change_bytes"] == -3 * GB


def test_the_text_shows_predicted_and_measured_memory_and_the_step_time():
    block = _memory_block()
    offered = over_step_lines(block["over_step"], [])
    assert "      measure it: --try checkpoint" in offered
    assert "      measure it: --try amp" in offered
    saves = memory_offers(block)["checkpoint"]
    control = _try("none", 10.0, 8 * GB)
    tries = judge_tries([_try("checkpoint", 12.0, 8 * GB - saves // 2)], [], None, [],
                        control, memory_offers(block))
    lines = over_step_lines(block["over_step"], tries)
    line = next(ln for ln in lines if "--try checkpoint:" in ln)
    assert line.startswith(f"      --try checkpoint: peak memory predicted −{saves / GB:.2f} GB, "
                           f"measured −{saves // 2 / GB:.2f} GB; step time +")
    assert "measure it: --try checkpoint" not in lines


def test_a_peak_not_measured_on_a_cpu_reads_so_never_as_zero():
    control = _try("none", 10.0, None)
    tries = judge_tries([_try("checkpoint", 12.0, None)], [], None, [], control,
                        {"checkpoint": 2 * GB})
    assert tries[0]["memory"]["change_bytes"] is None
    text = "\n".join(try_lines(tries) + over_step_lines(_memory_block()["over_step"], tries))
    assert "predicted −2.00 GB, not measured on CPU; step time +" in text and "0.00 GB" not in text


def test_a_notebook_try_records_the_peak_of_its_timed_steps(monkeypatch):
    """The peak is reset after the warm-up: what the timed steps alone reach."""
    calls = {"steps": 0, "reset_at": []}

    def step():
        calls["steps"] += 1

    monkeypatch.setattr(notebook, "_peak_memory_reset",
                        lambda cuda: calls["reset_at"].append(calls["steps"]))
    monkeypatch.setattr(notebook, "_peak_memory", lambda cuda: 1000 + calls["steps"])
    out: dict = {"fix": "checkpoint"}
    notebook._measure(step, {}, [], 5, 4, False, None, out)  # type: ignore[arg-type]
    # LOSS_STEPS loss steps, then the rest of the warm-up, then the reset, then 4 timed
    assert calls["reset_at"] == [5] and calls["steps"] == 9
    assert out["peak_memory_bytes"] == 1009

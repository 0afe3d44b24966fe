"""Exact arithmetic of steps, GPU busy/idle and gap causes on a hand-built two-step trace."""

import pytest
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.hostwork import classify_host
from jupyter_gpuprof.analysis.idle import gap_table, gpu_coverage, stream_table
from jupyter_gpuprof.analysis.ops import op_rows
from jupyter_gpuprof.analysis.steps import step_table
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.sync import sync_table
from jupyter_gpuprof.analysis.trace import load_trace


@pytest.fixture
def trace(tmp_path):
    """Step 1: a kernel, a data-loader wait, a kernel. Step 2: a sync, then a late launch."""
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    mm = b.op("aten::mm", 10.0, 40.0)
    b.kernel("gemm_a", 20.0, 100.0, 300.0, ext=mm)
    b.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 500.0, 300.0)
    add = b.op("aten::add", 850.0, 20.0)
    b.kernel("elementwise_b", 860.0, 900.0, 50.0, ext=add)
    b.step(2, 1000.0, 1000.0)
    b.kernel("gemm_c", 1010.0, 1100.0, 100.0)
    b.sync(1020.0, 185.0)
    add2 = b.op("aten::add", 1210.0, 90.0)
    b.kernel("elementwise_d", 1290.0, 1350.0, 50.0, ext=add2)
    return load_trace(b.write(tmp_path / "t.json.gz"))


def test_steps_assign_gpu_work_by_launch(trace):
    steps, window = step_table(trace)
    assert steps["step"].tolist() == [1, 2]
    assert steps["gpu_busy_us"].tolist() == [350.0, 150.0]
    assert steps["n_kernels"].tolist() == [2, 2]
    assert steps["gpu_end_us"].tolist() == [950.0, 1400.0]
    assert steps["step_us"].tolist() == [1000.0, 1000.0]
    assert (window.start_us, window.end_us) == (0.0, 2000.0)


def test_busy_per_stream(trace):
    _, window = step_table(trace)
    streams = stream_table(trace, window)
    assert streams[["stream", "busy_us", "busy_pct"]].values.tolist() == [[7, 500.0, 25.0]]


def test_gaps_and_their_causes(trace):
    _, window = step_table(trace)
    host = classify_host(trace, window.pid)
    gaps = gap_table(trace, window, host, gpu_coverage(trace))
    got = gaps[["start_us", "end_us", "cause"]].values.tolist()
    assert got == [[0.0, 100.0, "host"], [400.0, 900.0, "input"], [950.0, 1100.0, "host"],
                   [1200.0, 1350.0, "sync"], [1400.0, 2000.0, "host"]]
    first = gaps.iloc[0]
    assert (first["launch_us"], first["host_us"]) == (40.0, 60.0)
    assert gaps.iloc[1]["input_us"] == 300.0
    third = gaps.iloc[2]
    assert (third["sync_us"], third["launch_us"], third["host_us"]) == (80.0, 5.0, 65.0)
    fourth = gaps.iloc[3]
    assert bool(fourth["after_sync"]) and fourth["launch_us"] == 90.0


def test_sync_is_priced_by_the_idle_it_opens(trace):
    steps, window = step_table(trace)
    host = classify_host(trace, window.pid)
    gaps = gap_table(trace, window, host, gpu_coverage(trace))
    syncs = sync_table(host, op_rows(trace), gaps)
    assert syncs[["api", "dur_us", "gpu_idle_after_us"]].values.tolist() == [
        ["cudaStreamSynchronize", 185.0, 150.0]]


def test_reconcile_rescales_idle_to_the_baseline(trace):
    # real steps of 0.625 ms: GPU busy 0.25 ms/step, so real idle 0.375 of the 0.75 traced
    a = analyze(trace, baseline_step_ms=[0.625] * 5)
    assert a.real.source == "baseline"
    assert a.real.gpu_busy_ms == pytest.approx(0.25)
    assert a.real.idle_scale == pytest.approx(0.5)
    assert a.real.idle_by_cause_ms["input"] == pytest.approx(0.125)
    assert a.real.idle_by_cause_ms["host"] == pytest.approx(0.2125)
    assert a.real.idle_by_cause_ms["sync"] == pytest.approx(0.0375)
    assert a.busy_pct == pytest.approx(25.0)
    assert a.input_host_pct == pytest.approx(15.0)


def test_without_baseline_the_profiled_steps_are_the_reference(trace):
    a = analyze(trace)
    assert a.real.source == "trace" and a.real.step_ms == pytest.approx(1.0)
    assert a.real.idle_scale == pytest.approx(1.0)

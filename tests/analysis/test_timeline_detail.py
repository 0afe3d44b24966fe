"""Per-step event tables of the timeline: exact columns and phases, lane names, real traces."""


from paths import TESTS
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.timeline_detail import PHASES
from jupyter_gpuprof.report import analyze_path

REAL = TESTS / "data" / "real"


def _two_steps(tmp_path):
    """Two 1 ms steps: forward, backward (on the autograd thread), optimizer, data ranges."""
    b = TraceBuilder()
    for k, t0 in ((1, 0.0), (2, 1000.0)):
        b.step(k, t0, 1000.0)
        b.annotation("forward", t0 + 10, 290.0)
        mm = b.op("aten::mm", t0 + 20, 40.0)
        b.kernel("gemm", t0 + 30, t0 + 100, 150.0, ext=mm)
        b.annotation("backward", t0 + 300, 300.0)
        mmb = b.op("autograd::engine::evaluate_function: MmBackward0", t0 + 310, 50.0, tid=200)
        b.kernel("gemm_bwd", t0 + 320, t0 + 400, 100.0, ext=mmb, tid=200)
        b.annotation("Optimizer.step#AdamW.step", t0 + 700, 100.0)
        add = b.op("aten::_foreach_add_", t0 + 710, 20.0)
        b.kernel("foreach_add", t0 + 720, t0 + 730, 20.0, ext=add)
        b.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 850,
                     100.0)
    return analyze_path(b.write(tmp_path / "t.json.gz"))


def test_each_step_has_its_events_with_phases(tmp_path):
    tl = _two_steps(tmp_path).to_json()["timeline"]
    assert tl["phases"] == list(PHASES)
    assert [s["step"] for s in tl["steps"]] == [1, 2] and len(tl["detail"]) == 2
    labels = [lane["label"] for lane in tl["lanes"]]
    assert labels == ["CPU ranges (phases, data)", "main thread", "autograd thread",
                      "stream 7 compute"]
    d = tl["detail"][1]  # step 2: times from its start
    names = [tl["strings"][i] for i in d["name"]]
    rows = sorted(zip(d["lane"], d["start_us"], d["dur_us"], names,
                      [PHASES[p] for p in d["phase"]], strict=True))
    gpu = [r for r in rows if r[0] == 3]
    assert gpu == [(3, 100.0, 150.0, "gemm", "forward"),
                   (3, 400.0, 100.0, "gemm_bwd", "backward"),
                   (3, 730.0, 20.0, "foreach_add", "optimizer")]
    autograd = [r for r in rows if r[0] == 2]
    assert autograd == [(2, 310.0, 50.0, "autograd::engine::evaluate_function: MmBackward0",
                         "backward")]
    ranges = {r[3]: r[4] for r in rows if r[0] == 0}
    assert ranges["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"] == "data"


def test_forward_is_inferred_before_the_first_backward_without_capture_ranges(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    mm = b.op("aten::mm", 20.0, 40.0)
    b.kernel("gemm", 30.0, 100.0, 150.0, ext=mm)
    mmb = b.op("autograd::engine::evaluate_function: MmBackward0", 400.0, 50.0, tid=200)
    b.kernel("gemm_bwd", 410.0, 500.0, 100.0, ext=mmb, tid=200)
    tl = analyze_path(b.write(tmp_path / "t.json.gz")).to_json()["timeline"]
    d = tl["detail"][0]
    by = {tl["strings"][n]: PHASES[p] for n, p, lane in zip(d["name"], d["phase"], d["lane"],
                                                              strict=True)
          if tl["lanes"][lane]["kind"] == "gpu"}
    assert by == {"gemm": "forward", "gemm_bwd": "backward"}


def test_real_trace_ships_typical_steps_and_the_scale(tmp_path):
    tl = analyze_path(REAL / "compute").to_json()["timeline"]
    shipped = [d for d in tl["detail"] if d is not None]
    assert len(tl["detail"]) == len(tl["steps"]) and 1 <= len(shipped) <= 2
    gpu_lanes = {i for i, lane in enumerate(tl["lanes"]) if lane["kind"] == "gpu"}
    kernels = [tl["strings"][n] for n, lane in zip(shipped[0]["name"], shipped[0]["lane"],
                                                    strict=True) if lane in gpu_lanes]
    assert len(kernels) >= 8 and any("gemm" in k.lower() or "nvjet" in k for k in kernels)
    assert tl["profiled_scale"] is not None and tl["profiled_scale"] > 0.5
    assert any(lane["label"].endswith("compute") for lane in tl["lanes"])


def test_an_unnamed_role_thread_is_numbered_with_the_traces_own_name(tmp_path):
    """No raw thread id as a lane name: "CPU thread N", with the name the trace gives it."""
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    mm = b.op("aten::mm", 20.0, 40.0)
    b.kernel("gemm", 30.0, 100.0, 150.0, ext=mm)
    b.op("aten::copy_", 200.0, 30.0, tid=1874913600)  # a worker thread of no known role
    b.op("aten::add", 600.0, 10.0, tid=31)
    b.events.append({"ph": "M", "name": "thread_name", "pid": 100, "tid": 1874913600, "ts": 0,
                     "args": {"name": "thread 1874913600 (pt_worker)"}})
    tl = analyze_path(b.write(tmp_path / "t.json.gz")).to_json()["timeline"]
    labels = [lane["label"] for lane in tl["lanes"] if lane["kind"] == "cpu"]
    assert labels == ["main thread", "CPU thread 2 (pt_worker)", "CPU thread 3"]
    assert not any("1874913600" in label for label in labels)


def test_gpu_events_carry_their_launch_link_op_and_grid(tmp_path):
    """A GPU event knows its correlation id, where the host launched it (the flow arrow's
    tail: time from the step start and lane), its launching op and shapes, grid and block."""
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    mm = b.op("aten::mm", 20.0, 40.0, dims=[[64, 128], [128, 256]])
    b.kernel("gemm", 30.0, 100.0, 150.0, ext=mm)
    b.events[-1]["args"].update(grid=[80, 1, 1], block=[128, 1, 1])
    mmb = b.op("autograd::engine::evaluate_function: MmBackward0", 400.0, 50.0, tid=200)
    b.kernel("gemm_bwd", 410.0, 500.0, 100.0, ext=mmb, tid=200)
    tl = analyze_path(b.write(tmp_path / "t.json.gz")).to_json()["timeline"]
    lanes = [lane["label"] for lane in tl["lanes"]]
    d = tl["detail"][0]
    strings = tl["strings"]
    gpu = lanes.index("stream 7 compute")
    rows = [i for i, lane in enumerate(d["lane"]) if lane == gpu]
    first, second = sorted(rows, key=lambda i: d["start_us"][i])
    assert d["launch_us"][first] == 30.0 and lanes[d["launch_lane"][first]] == "main thread"
    assert d["launch_us"][second] == 410.0
    assert lanes[d["launch_lane"][second]] == "autograd thread"
    assert d["corr"][first] >= 0 and d["corr"][first] != d["corr"][second]
    assert strings[d["op"][first]] == "aten::mm"
    assert strings[d["shape"][first]] == "[[64, 128], [128, 256]]"
    assert strings[d["config"][first]] == "grid [80, 1, 1] · block [128, 1, 1]"
    assert strings[d["config"][second]] == ""
    host = [i for i, lane in enumerate(d["lane"]) if lane != gpu]
    assert all(d["corr"][i] == -1 and d["launch_lane"][i] == -1 for i in host)

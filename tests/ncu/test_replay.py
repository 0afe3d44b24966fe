"""Op replay: hot kernels -> recorded op calls -> a standalone script -> ncu (fake) -> results."""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from paths import TESTS

from jupyter_gpuprof.ncu import (
    NcuOptions,
    attribute_targets,
    load_ncu,
    profile_replay,
    read_raw_csv,
)
from jupyter_gpuprof.ncu import replay_script as S
from jupyter_gpuprof.ncu.replay import SCRIPT_PATH, replay_params, replay_status, write_replay
from jupyter_gpuprof.ncu.targets import ReplayTarget, replay_targets
from jupyter_gpuprof.store import RunStore

HERE = TESTS
FAKE = str(HERE / "fakes" / "ncu")
RAW = HERE / "data" / "ncu" / "tinygpt_step_full8.raw.csv.gz"
PRECISION = HERE / "data" / "real" / "precision" / "trace.json.gz"  # fp32 Linear layers
GEMM = "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(T1::Params)"
NORM = (
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int)"
)


def op(ext: int, name: str, ts: float, dims, types, strides, concrete) -> dict:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": 1,
        "ts": ts,
        "dur": 5.0,
        "args": {
            "External id": ext,
            "Input Dims": dims,
            "Input type": types,
            "Input Strides": strides,
            "Concrete Inputs": concrete,
        },
    }


def kernel(ext: int, name: str, ts: float, dur: float) -> dict:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": {"External id": ext, "correlation": ext, "stream": 7, "device": 0},
    }


def small_trace(path: Path) -> Path:
    """Three hot kernels: a GEMM (mm), a layer norm, and an optimizer op that cannot be replayed."""
    ev = [
        op(
            1, "aten::mm", 0, [[64, 32], [32, 16]], ["float", "float"], [[32, 1], [1, 32]], ["", ""]
        ),
        kernel(1, GEMM, 10, 50.0),
        op(
            2,
            "aten::native_layer_norm",
            100,
            [[4, 8, 32], [], [32], [32], []],
            ["float", "ScalarList", "float", "float", "Scalar"],
            [[256, 32, 1], [], [1], [1], []],
            ["", "[32]", "", "", "1.0000000000000001e-05"],
        ),
        kernel(2, NORM, 110, 30.0),
        op(
            3,
            "aten::_foreach_add_",
            200,
            [[], [], []],
            ["TensorList", "float", "Scalar"],
            [[], [], []],
            ["", "", "1."],
        ),
        kernel(3, "void at::native::multi_tensor_apply_kernel<X>(Y)", 210, 20.0),
    ]
    path.write_bytes(gzip.compress(json.dumps({"schemaVersion": 1, "traceEvents": ev}).encode()))
    return path


def test_targets_from_a_real_trace():
    t = replay_targets(PRECISION, top=3, spares=0)
    assert [x.index for x in t] == [0, 1, 2]
    assert [x.op for x in t] == ["aten::mm"] * 3 and t[0].types == ["float", "float"]
    assert t[0].dims == [[8192, 4096], [4096, 8192]] and "sgemm" in t[0].kernel
    assert t[0].strides and all(not x.skip_reason for x in t)
    assert t[0].pct_of_gpu > t[1].pct_of_gpu > 0


def run_on_cpu(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The replay script as ncu runs it, on the CPU: its statuses are real, kernels are not."""
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        env={"GPUPROF_REPLAY_DEVICE": "cpu", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_unreplayable_inputs_are_named(tmp_path):
    t = replay_targets(small_trace(tmp_path / "t.json.gz"), top=3)
    assert [x.op for x in t] == ["aten::mm", "aten::native_layer_norm", "aten::_foreach_add_"]
    assert "TensorList" in t[2].skip_reason and not t[0].skip_reason


def test_generated_script_rebuilds_ops_on_cpu(tmp_path):
    targets = replay_targets(small_trace(tmp_path / "t.json.gz"), top=3)
    targets.append(
        ReplayTarget(3, "k", "aten::definitely_not_an_op", [[2]], ["float"], [[1]], [""])
    )
    out = run_on_cpu(write_replay(tmp_path / "w", replay_params(targets, warmup=1)))
    status = replay_status(out.stdout)
    assert status[0] == "" and status[1] == ""  # mm with transposed strides, layer norm
    assert 2 not in status  # the TensorList op was never put in the script
    assert status[3].startswith("AttributeError")


def crafted_raw(tmp_path: Path, rows: list[tuple[int, str, int]]) -> Path:
    """The real 8-kernel export, rows chosen and renamed, in the given NVTX target ranges."""
    data = list(csv.reader(io.StringIO(gzip.decompress(RAW.read_bytes()).decode())))
    head, units, body = data[0], data[1], data[2:]
    k, nv = (
        head.index("Kernel Name"),
        head.index("Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"),
    )
    out = [head, units]
    for i, (src, name, target) in enumerate(rows):
        r = list(body[src])
        r[0], r[k] = str(i), name
        r[nv] = f'0 "<default domain>:gpuprof_replay"  1 "<default domain>:gpuprof_target_{target}"'
        out.append(r)
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL).writerows(out)
    path = tmp_path / "crafted.raw.csv"
    path.write_text(buf.getvalue())
    return path


def test_attribution_checks_names_against_the_trace(tmp_path):
    targets = [
        {"index": 0, "op": "aten::mm", "kernel": GEMM, "kernels": [GEMM]},
        {"index": 1, "op": "aten::native_layer_norm", "kernel": NORM, "kernels": [NORM]},
    ]
    raw = crafted_raw(
        tmp_path,
        [
            (7, "void cutlass::Kernel2<other_algo>(P)", 0),
            (2, NORM, 1),
            (3, "void at::native::fill_kernel<1>()", 1),
        ],
    )
    k = attribute_targets(read_raw_csv(raw), targets)
    assert k["target"].tolist() == [0, 1, 1]
    assert k["name_match"].tolist() == [True, True, False]  # Kernel2 is the base of both names
    assert k["op"].tolist() == ["aten::mm", "aten::native_layer_norm", "aten::native_layer_norm"]


def test_replay_end_to_end_with_fake_ncu(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs")
    run = store.create("gpuprofile")
    small_trace(run.path / "trace.json.gz")
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "ok")
    monkeypatch.setenv("FAKE_NCU_RAW", str(crafted_raw(tmp_path, [(7, GEMM, 0), (2, NORM, 1)])))
    res = profile_replay(run, top=3, opts=NcuOptions(timeout_s=120), ncu=FAKE)
    k = res.kernels
    assert k["op"].tolist() == ["aten::mm", "aten::native_layer_norm"]
    assert k["name_match"].all()
    assert k.loc[0, "flops_source"] == "shapes" and k.loc[0, "flops"] == 2 * 64 * 32 * 16
    assert k["pct_of_gpu"].tolist() == pytest.approx([50.0, 30.0])
    assert [t["skip_reason"] for t in res.info["targets"]][:2] == ["", ""]
    assert "TensorList" in res.info["targets"][2]["skip_reason"]
    assert res.info["clock_control"] == "none" and res.info["mode"] == "op replay"
    names = {p.name for p in (run.path / "ncu").iterdir()}
    assert any(n.endswith(".ncu-rep.gz") for n in names)
    assert any(n.endswith(".raw.csv.gz") for n in names)
    assert any(n.endswith(".details.csv.gz") for n in names)
    assert any(n.endswith(".replay.py") for n in names)
    again = load_ncu(run)  # reopened from the run folder, no ncu needed
    assert again.kernels["name_match"].tolist() == k["name_match"].tolist()
    assert again.kernels["duration_us"].tolist() == k["duration_us"].tolist()
    assert "aten::mm" in res.to_text() and "<svg" in res._repr_html_()


def test_a_spare_stands_in_for_an_op_that_fails_to_rebuild(tmp_path):
    targets = replay_targets(small_trace(tmp_path / "t.json.gz"), top=1)
    assert [t.op for t in targets] == ["aten::mm", "aten::native_layer_norm", "aten::_foreach_add_"]
    targets[0].op = "aten::definitely_not_an_op"  # the hottest op now fails at run time
    out = run_on_cpu(write_replay(tmp_path / "w", replay_params(targets, warmup=1, limit=1)))
    status = replay_status(out.stdout)
    assert status[0].startswith("AttributeError") and status[1] == ""
    assert 2 not in status  # unreplayable: never in the script


def test_only_the_first_ops_that_rebuild_are_profiled(tmp_path):
    targets = replay_targets(small_trace(tmp_path / "t.json.gz"), top=1)
    out = run_on_cpu(write_replay(tmp_path / "w", replay_params(targets, warmup=1, limit=1)))
    assert replay_status(out.stdout) == {0: "", 1: "unused"}


def test_the_script_is_an_importable_module_with_its_own_parsers(monkeypatch):
    monkeypatch.setattr(S, "DEVICE", "cpu")
    assert S.scalar("2") == 2 and S.scalar("0.5") == 0.5 and S.scalar("True") is True
    assert S.scalar("[1, False]") == [1, False] and S.scalar("mean") == "mean"
    t = {"op": "aten::mm", "dims": [[2, 3], [3, 4]], "types": ["float", "float"],
         "strides": [[1, 2], [4, 1]], "concrete": ["", ""]}
    a, b = S.build(t)
    assert a.shape == (2, 3) and a.stride() == (1, 2) and b.stride() == (4, 1)
    assert S.resolve(t, [a, b])().shape == (2, 4)
    assert S.main(["replay.py"]) == 2  # no parameters file: usage, not a traceback


def test_a_stored_replay_reruns_by_hand_from_its_session_files(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs")
    run = store.create("gpuprofile")
    small_trace(run.path / "trace.json.gz")
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "ok")
    monkeypatch.setenv("FAKE_NCU_RAW", str(crafted_raw(tmp_path, [(7, GEMM, 0), (2, NORM, 1)])))
    res = profile_replay(run, top=2, opts=NcuOptions(timeout_s=120), ncu=FAKE)
    script, info = res.files["script"], res.files["info"]
    assert script.read_text() == SCRIPT_PATH.read_text()  # the module itself, not generated
    out = run_on_cpu([str(script), str(info)])
    assert replay_status(out.stdout) == {0: "", 1: ""}, out.stderr

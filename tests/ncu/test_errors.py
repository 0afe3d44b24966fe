"""Every ncu failure mode gives one line that says what to do (fake ncu, real ncu texts)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from paths import TESTS

from jupyter_gpuprof.ncu import NcuError, NcuOptions
from jupyter_gpuprof.ncu import driver as N
from jupyter_gpuprof.ncu.errors import check_output

FAKE = str(TESTS / "fakes" / "ncu")
DATA = TESTS / "data" / "ncu"
OK_APP = "print('training step done')"
RAISING_APP = "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB')"


def profile(tmp_path: Path, monkeypatch, scenario: str, app: str = OK_APP, **kw) -> N.NcuResult:
    monkeypatch.setenv("FAKE_NCU_SCENARIO", scenario)
    opts = NcuOptions(**kw)
    script = tmp_path / "app.py"
    script.write_text(app)
    base = tmp_path / "rep"
    cmd = N.build_command(N.find_ncu(FAKE), opts, base, [sys.executable, str(script)])
    return N.run_ncu(cmd, base.with_suffix(".ncu-rep"), opts, progress=None)


def one_line(e: pytest.ExceptionInfo[NcuError]) -> str:
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_success_counts_kernels_and_keeps_output(tmp_path, monkeypatch):
    res = profile(tmp_path, monkeypatch, "ok")
    assert res.report.is_file() and res.kernels_profiled == 3
    assert "training step done" in res.output


def test_ncu_not_found(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(N.ENV_NCU, raising=False)
    monkeypatch.setattr(N, "SEARCH_GLOBS", ())
    with pytest.raises(NcuError) as e:
        N.find_ncu()
    msg = one_line(e)
    assert e.value.kind == "not_found" and "--ncu PATH" in msg and N.ENV_NCU in msg
    with pytest.raises(NcuError, match="from --ncu"):
        N.find_ncu(str(tmp_path / "nope" / "ncu"))


def test_env_variable_points_to_ncu(monkeypatch):
    monkeypatch.setenv(N.ENV_NCU, FAKE)
    assert N.find_ncu() == FAKE
    assert N.ncu_version(FAKE) == (2025, 3, 1)


def test_too_old(monkeypatch):
    monkeypatch.setenv("FAKE_NCU_VERSION", "2019.5.0.0")
    with pytest.raises(NcuError) as e:
        N.ncu_version(FAKE)
    assert e.value.kind == "too_old" and "2019.5" in one_line(e) and "--ncu PATH" in str(e.value)


def test_counter_permission(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "perm")
    msg = one_line(e)
    assert e.value.kind == "permission"
    assert "ERR_NVGPUCTRPERM" in msg and "NVreg_RestrictProfilingToAdminUsers=0" in msg
    assert "CAP_SYS_ADMIN" in msg


def test_cannot_connect_to_driver(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "driver")
    assert e.value.kind == "driver" and "nvidia-smi" in one_line(e)


def test_no_kernels_profiled_exits_zero_and_is_still_an_error(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "nokernels", kernel_regex="nope_kernel", launch_skip=5)
    msg = one_line(e)
    assert e.value.kind == "no_kernels"
    assert "'nope_kernel'" in msg and "--launch-skip" in msg


def test_no_kernels_with_push_pop_filter_explains_start_end(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "nokernels_pushpop", nvtx_include=["train_step/"])
    msg = one_line(e)
    assert "push/pop" in msg and "range_start/range_end" in msg and "without the '/'" in msg


def test_real_no_kernels_output_is_recognised():
    text = (DATA / "ncu_nothing_matched.txt").read_text()
    with pytest.raises(NcuError) as e:
        check_output(text, 0, Path("/nonexistent.ncu-rep"), NcuOptions(nvtx_include=["nope/"]))
    assert e.value.kind == "no_kernels" and "push/pop" in str(e.value)


def test_profiled_code_raising(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "ok", app=RAISING_APP)
    msg = one_line(e)
    assert e.value.kind == "app_error"
    assert "exit 1" in msg and "RuntimeError: CUDA out of memory" in msg
    assert "without ncu" in msg
    assert "Traceback" in e.value.output  # the full output stays available


def test_timeout_stops_ncu(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "hang", timeout_s=1.0)
    msg = one_line(e)
    assert e.value.kind == "timeout" and "within 1 s" in msg and "--timeout" in msg


def test_missing_report_is_reported(tmp_path, monkeypatch):
    with pytest.raises(NcuError) as e:
        profile(tmp_path, monkeypatch, "noreport")
    assert e.value.kind == "failed" and "no report" in one_line(e)


def test_command_defaults_to_unlocked_clocks_and_full_set():
    cmd = N.build_command("ncu", NcuOptions(), "out", ["python", "x.py"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--set") + 1] == "full"
    assert cmd[-2:] == ["python", "x.py"] and "--nvtx" not in cmd


def test_command_filters():
    opts = NcuOptions(
        nvtx_include=["train_step"],
        kernel_regex="gemm|nvjet",
        launch_skip=2,
        launch_count=3,
        sections=["WarpStateStats"],
        clock_control="base",
    )
    cmd = N.build_command("ncu", opts, "out", ["python", "x.py"])
    text = " ".join(cmd)
    assert "--nvtx --nvtx-include train_step" in text
    assert "--kernel-name regex:gemm|nvjet" in text
    assert "--launch-skip 2" in text and "--launch-count 3" in text
    assert "--section WarpStateStats" in text and "--set" not in cmd
    assert cmd[cmd.index("--clock-control") + 1] == "base"


def test_progress_lines(capsys):
    N.print_progress('==PROF== Profiling "nvjet_sm90" - 2: 0%....50%....100% - 38 passes\n')
    N.print_progress("loss 1.0\n")
    assert capsys.readouterr().out == "ncu: profiled kernel 3: nvjet_sm90 (38 replay passes)\n"

"""`run --ranks` and `run --ncu-rank` on CPU: real 2-rank gloo torchrun jobs and a fake ncu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ddp_script import DDP
from paths import TESTS

from jupyter_gpuprof.capture.ranks import (
    current_rank,
    format_ranks,
    job_rank,
    parse_ranks,
    rank_selected,
)
from jupyter_gpuprof.cli import main
from jupyter_gpuprof.launcher.rank_launch import parse_ncu_args
from jupyter_gpuprof.launcher.torchrun import LAUNCHER, TorchrunError, rewrite_for_ncu
from jupyter_gpuprof.protocol import ENV_RANKS
from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.store.ncu_files import list_ncu

FAKE_NCU = str(TESTS / "fakes" / "ncu")
FLAGS = ["--steps", "4", "--warmup", "1", "--wait", "1", "--prof-warmup", "1", "--active", "2"]



def torchrun(tmp_path: Path, n: int = 2) -> list[str]:
    p = tmp_path / "ddp.py"
    p.write_text(DDP)
    # --standalone picks a free rendezvous port: the default 29500 may be taken on a busy host
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
            str(n), str(p)]


def _torch_heap_abort(output: str) -> bool:
    """A rank died in glibc's heap check inside torch (seen once in CI: the CPU build's
    profiler stopping beside gloo's threads, "malloc(): unsorted double linked list
    corrupted"): a crash of the training process, not of the launcher under test."""
    return "malloc(): " in output or "double free" in output or "corrupted size" in output


def only_run(root: Path):
    runs = RunStore(root).list()
    assert len(runs) == 1 and not runs[0].broken
    return runs[0]


# rank lists ---------------------------------------------------------------------------------
def test_parse_ranks_forms():
    assert parse_ranks("0,3") == [0, 3]
    assert parse_ranks(" 0-2, 5,1 ") == [0, 1, 2, 5]
    assert parse_ranks("none") == [] and format_ranks([]) == "none"
    assert parse_ranks("") is None and parse_ranks(None) is None
    assert parse_ranks([3, 1, 3]) == [1, 3] and format_ranks([1, 3]) == "1,3"
    for bad in ("a", "-1", "3-1", "1,,2"):
        with pytest.raises(ValueError):
            parse_ranks(bad)


def test_rank_selected_reads_rank_from_env(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert rank_selected([1])  # not a rank of a job: captured as before
    monkeypatch.setenv("RANK", "0")
    assert not rank_selected([1]) and rank_selected([0, 1]) and rank_selected(None)
    assert not rank_selected([])


def test_one_rank_detector_for_selection_and_meta(monkeypatch):
    """The session's (rank, world size) comes from the same detector as rank selection."""
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert current_rank() is None and job_rank() is None
    monkeypatch.setenv("LOCAL_RANK", "2")  # a launcher that sets only the local rank
    assert current_rank() == 2 and job_rank() == (2, 1)
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("WORLD_SIZE", "8")
    assert current_rank() == 5 and job_rank() == (5, 8)


def test_profile_block_on_a_rank_left_out_is_untouched(tmp_path, monkeypatch):
    import torch

    import jupyter_gpuprof

    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv(ENV_RANKS, "1")  # the default for profile(ranks=None)
    root = tmp_path / "runs"
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with jupyter_gpuprof.profile("skip", steps=2, warmup=1, active=1, runs_root=root) as s:
        for _ in range(8):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()
            jupyter_gpuprof.step()
    assert s.closed and s.run is None and s.driver.n == 0
    assert not root.exists()  # no files at all
    monkeypatch.delenv(ENV_RANKS)
    with jupyter_gpuprof.profile("mine", steps=2, warmup=1, active=1, runs_root=root, ranks=[0]):
        for _ in range(8):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()
    m = only_run(root).meta
    assert m.status == "complete", m.error
    assert m.settings["ranks"] == [0] and m.rank == 0


def test_rank_known_only_at_the_first_step_drops_out(tmp_path, monkeypatch):
    import torch
    from torch.optim import optimizer as optim_module

    import jupyter_gpuprof
    from jupyter_gpuprof.capture.session import current_session

    hooks = len(optim_module._global_optimizer_post_hooks)
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    root = tmp_path / "runs"
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with jupyter_gpuprof.profile("late", steps=2, warmup=1, active=1, runs_root=root, ranks=[1]):
        assert len(RunStore(root).list()) == 1  # rank unknown yet: the capture starts
        monkeypatch.setenv("RANK", "0")  # as after init_process_group in an mp.spawn worker
        for _ in range(8):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()
        assert current_session() is None  # hooks gone at the first step
        # torch's own hook too, though the capture ended inside it (capture/optimizer_hooks.py)
        assert len(optim_module._global_optimizer_post_hooks) == hooks
    assert RunStore(root).list() == []  # and the folder it had made


def test_cli_rejects_a_bad_rank_list(tmp_path, capsys):
    assert main(["run", "--runs-root", str(tmp_path), "--ranks", "x", "--", "true"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuprof: bad rank list 'x'")
    assert not any(tmp_path.iterdir())  # checked before a run folder is made


def test_run_torchrun_profiles_only_the_listed_ranks(tmp_path, capfd):
    root = tmp_path / "runs"
    assert main(["run", "--runs-root", str(root), *FLAGS, "--ranks", "1", "--",
                 *torchrun(tmp_path)]) == 0
    run = only_run(root)
    assert [t.name for t in run.trace_paths()] == ["trace.rank1.json.gz"]
    assert sorted(run.rank_metas()) == [1]
    m = run.meta
    assert m.status == "complete", m.error
    assert m.ranks == [1] and m.world_size == 2 and m.settings["ranks"] == [1]
    out, err = capfd.readouterr()
    assert "rank 0 under_ncu=0" in out and "rank 1 under_ncu=0" in out
    assert "traced ranks 1 of 2" in err
    assert main(["analyze", str(run.path)]) == 0
    assert capfd.readouterr().out.strip()


def test_cross_rank_analysis_keeps_the_rank_numbers_of_a_gapped_list(tmp_path, capfd):
    root = tmp_path / "runs"
    assert main(["run", "--runs-root", str(root), *FLAGS, "--ranks", "0,2", "--json", "--",
                 *torchrun(tmp_path, 3)]) == 0
    out, err = capfd.readouterr()
    summary = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
    assert [r["rank"] for r in summary["distributed"]["ranks"]] == [0, 2]
    assert summary["source"]["world_size"] == 3 and "traced ranks 0,2 of 3" in err
    assert only_run(root).meta.ranks == [0, 2]


# --ncu-rank ---------------------------------------------------------------------------------
def test_rewrite_torchrun_for_ncu_exact():
    cmd = ["torchrun", "--standalone", "--nproc-per-node", "2", "train.py", "--lr", "1"]
    assert rewrite_for_ncu(cmd, 1, "PY", "-k regex:gemm -c 5", "NCU") == [
        "torchrun", "--standalone", "--nproc-per-node", "2", "--no-python",
        "PY", "-m", LAUNCHER, "--ncu-rank", "1", "--ncu", "NCU", "--ncu-args=-k regex:gemm -c 5",
        "--", "PY", "-u", "train.py", "--lr", "1",
    ]  # fmt: skip
    cmd = ["python3", "-m", "torch.distributed.run", "--nproc-per-node=2", "-m", "pkg.train", "x"]
    assert rewrite_for_ncu(cmd, 0, "PY") == [
        "python3", "-m", "torch.distributed.run", "--nproc-per-node=2", "--no-python",
        "PY", "-m", LAUNCHER, "--ncu-rank", "0", "--", "PY", "-u", "-m", "pkg.train", "x",
    ]  # fmt: skip
    cmd = ["torchrun", "--no-python", "--nnodes", "1", "bash", "run.sh", "-m"]
    assert rewrite_for_ncu(cmd, 0, "PY") == [
        "torchrun", "--nnodes", "1", "--no-python",
        "PY", "-m", LAUNCHER, "--ncu-rank", "0", "--", "bash", "run.sh", "-m",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("cmd", "says"),
    [
        (["python", "train.py"], "rewrites only plain torchrun commands"),
        (["accelerate", "launch", "train.py"], "got 'accelerate'"),
        (["torchrun", "--run-path", "t.py"], "--run-path"),
        (["torchrun", "--bogus", "t.py"], "torchrun rejects this command"),
    ],
)
def test_rewrite_refuses_other_commands(cmd, says):
    with pytest.raises(TorchrunError) as e:
        rewrite_for_ncu(cmd, 0, "PY")
    assert says in str(e.value) and "\n" not in str(e.value)


def test_ncu_args_become_options_with_a_short_default_window():
    o = parse_ncu_args("-k regex:gemm -c 5 --set full --metrics a,b")
    assert (o.kernel_regex, o.launch_count, o.set_name, o.extra) == (
        "gemm", 5, "full", ["--metrics", "a,b"]
    )
    assert parse_ncu_args("-k ampere_gemm").kernel_regex == "^ampere_gemm$"
    assert parse_ncu_args("").launch_count is None  # profile_command then takes -c 10
    for bad in ("-o x", "--export=y", "-c x"):
        with pytest.raises(ValueError):
            parse_ncu_args(bad)


def test_ncu_rank_refuses_a_plain_python_command(tmp_path, capsys):
    argv = ["run", "--runs-root", str(tmp_path), "--ncu-rank", "0", "--ncu", FAKE_NCU, "--",
            sys.executable, "train.py"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rewrites only plain torchrun commands" in err[0]
    assert main(["run", "--runs-root", str(tmp_path), "--ncu-args", "-c 3", "--", "true"]) == 2
    assert "needs --ncu-rank" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_rank_launch_execs_other_ranks_unchanged(tmp_path):
    env = dict(os.environ, RANK="0", JUPYTER_GPUPROF_NCU=str(tmp_path / "no-ncu"))
    code = "import os, sys; print('plain', os.getpid() == int(sys.argv[1]))"
    # the rank's command sees the launcher's own pid: exec, not a child process
    launcher = (
        "import os, sys, runpy; sys.argv = ['x', '--ncu-rank', '1', '--', sys.executable, '-c', "
        f"{code!r}, str(os.getpid())]; runpy.run_module('{LAUNCHER}', run_name='__main__')"
    )
    out = subprocess.run([sys.executable, "-c", launcher], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "plain True"


def test_run_torchrun_with_one_rank_under_ncu(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "ok")
    for attempt in (1, 2):
        root = tmp_path / f"runs{attempt}"
        argv = ["run", "--runs-root", str(root), *FLAGS, "--ncu-rank", "1", "--ncu", FAKE_NCU,
                "--ncu-args", "-k regex:^(?!nccl) --set full", "--", *torchrun(tmp_path)]
        code = main(argv)
        out, err = capfd.readouterr()
        if code == 0 or not _torch_heap_abort(out + err):
            break
    assert code == 0, err[-2000:]
    assert "rank 1 under_ncu=1" in out and "rank 0 under_ncu=0" in out
    run = only_run(root)
    assert [t.name for t in run.trace_paths()] == ["trace.rank0.json.gz"]  # rank 1: ncu only
    m = run.meta
    assert m.status == "complete", m.error
    assert m.ranks == [0] and m.world_size == 2
    assert m.settings["ncu"]["rank"] == 1 and "--no-python" in m.settings["ncu"]["command"]
    assert "torch.distributed.run" in m.code and LAUNCHER not in m.code  # what the user typed
    assert list_ncu(run) == ["rank1"]
    names = {p.name for p in (run.path / "ncu").iterdir()}
    assert {"rank1.ncu-rep.gz", "rank1.raw.csv.gz", "rank1.details.csv.gz", "rank1.json"} <= names
    from jupyter_gpuprof.ncu import load_ncu

    res = load_ncu(run, "rank1")
    assert len(res.kernels) > 0
    cmd = res.info["command"]
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--launch-count") + 1] == "10"  # the short default window
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:^(?!nccl)"
    assert f"ncu on rank 1: {len(res.kernels)} kernels" in err


def test_run_torchrun_ncu_rank_failure_is_one_line(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "nokernels")
    root = tmp_path / "runs"
    argv = ["run", "--runs-root", str(root), *FLAGS, "--ranks", "none", "--ncu-rank", "0",
            "--ncu", FAKE_NCU, "--", *torchrun(tmp_path)]
    assert main(argv) == 0  # the training itself succeeded
    err = capfd.readouterr().err
    run = only_run(root)
    assert run.trace_paths() == [] and run.meta.status == "complete", run.meta.error
    lines = [ln for ln in err.splitlines() if ln.startswith("gpuprof: ncu on rank 0:")]
    assert lines and all("no kernels were profiled" in ln for ln in lines)
    assert (run.path / "ncu" / "rank0.error").is_file() and list_ncu(run) == []

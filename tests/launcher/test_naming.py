"""Runs of one script are named apart by the arguments that differ (issue: "main" ×3)."""

from __future__ import annotations

from jupyter_gpuprof.launcher.naming import MAX_NAME_CHARS, run_name


def test_the_script_and_its_arguments_name_the_run() -> None:
    cmd = ["python", "train.py", "config/train_gpt2.py", "--batch_size=8", "--dtype", "bfloat16"]
    assert run_name(cmd) == "train train_gpt2 batch_size=8 dtype=bfloat16"


def test_two_runs_of_one_script_get_two_names() -> None:
    names = {run_name(["python", "main.py", "--lr", lr]) for lr in ("0.1", "0.01")}
    assert names == {"main lr=0.1", "main lr=0.01"}


def test_a_module_a_flag_and_a_negative_value() -> None:
    assert run_name(["python", "-m", "pkg.train", "--compile", "--shift", "-1"]) == (
        "train compile shift=-1")
    assert run_name(["torchrun", "--nproc-per-node=2", "ddp.py", "--amp"]) == "ddp amp"
    assert run_name(["./bench"]) == "bench"


def test_a_long_command_is_cut_at_a_word() -> None:
    name = run_name(["python", "train.py", *[f"--option_{i}=value_{i}" for i in range(20)]])
    assert len(name) <= MAX_NAME_CHARS + 2 and name.endswith(" …")
    assert name.startswith("train option_0=value_0 ")

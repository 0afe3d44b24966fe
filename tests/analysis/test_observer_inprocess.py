"""The in-process observer check: a script's own log values put in the blocks they were measured
in, each `on` block against the `off` block before it, and the toggler really switching."""

from __future__ import annotations

import statistics
import textwrap

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def inproc():
    return load_benchmark("corpus/observer_inprocess")


ENTRY = {"id": "toy", "command": ["train.py"],
         "own_log": {"regex": r"ms/batch\s+([\d.]+)", "unit": "ms", "group": 1}}


def _lines(spec):
    """(arrival time, line) from ('v', t, ms) log values and ('s', t, state) switches."""
    out = []
    for kind, t, x in spec:
        out.append((t, f"| ms/batch {x:.2f} | loss 1.0\n" if kind == "v"
                    else f"gpuprof-observer: {x} {t + 1000:.6f}\n"))
    return out


def test_a_value_belongs_to_a_block_only_when_measured_wholly_inside_it(inproc):
    lines = _lines([("v", 0.0, 9.0), ("s", 0.05, "on"), ("v", 0.1, 5.0), ("v", 0.2, 5.5),
                    ("v", 0.3, 6.0), ("s", 0.35, "off"), ("v", 0.4, 7.0), ("v", 0.5, 4.0),
                    ("v", 0.6, 4.5), ("s", 0.65, "on")])
    marks = inproc.switches(lines)
    assert [s for _, s in marks] == ["on", "off", "on"]
    assert [t for t, _ in marks] == [0.05, 0.35, 0.65]  # arrival stamps, not the child's clock
    got = inproc.blocks(marks, inproc.values(ENTRY, lines))
    # the value at 0.1 spans 0.0-0.1 (a switch inside it): out; the one at 0.4 spans the switch
    # too; the first value wholly inside a block (0.2, 0.5) holds the switch's one-off work
    assert got == [("on", [6.0]), ("off", [4.5])]


def test_each_on_block_is_read_against_the_off_block_before_it(inproc):
    blk = [("off", [4.0, 4.0, 4.2]), ("on", [4.4, 4.4, 4.2]), ("off", [6.0, 6.0, 6.0]),
           ("on", [6.6, 6.6, 6.6]), ("off", [5.0, 5.0]), ("on", [9.0, 9.0, 9.0])]
    got = inproc.rounds(blk, least=3)
    # a slow stretch of the process (6 ms) reads the same 10 % as a fast one; a block with too
    # few values is no round
    assert got == pytest.approx([1.1 / 1.0 * 4.0 / 4.0, 1.1])
    assert inproc.rounds(blk, least=2)[-1] == pytest.approx(1.8)
    assert inproc.rounds([("on", [1.0] * 3), ("off", [2.0] * 3)]) == []  # off after on: no round


def test_blocks_of_whole_epochs_are_read_by_their_mean(inproc, monkeypatch):
    """Each block of whole epochs holds one stall (the last value); its mean is the wall time a
    value, which the median leaves out: a capture that slowed only the stall reads 10 %."""
    blk = [("off", [10.0, 30.0, 10.0, 30.0, 120.0]), ("on", [10.0, 30.0, 10.0, 30.0, 140.0])]
    assert inproc.rounds(blk, align="epoch") == pytest.approx([220.0 / 200.0])
    assert inproc.rounds(blk) == pytest.approx([1.0])
    monkeypatch.delenv("OBSERVER_ALIGN", raising=False)
    assert inproc.alignment({"id": "gan", "observer": {"align": "epoch"}}) == "epoch"
    assert inproc.alignment({"id": "lm"}) == ""
    with pytest.raises(ValueError, match="align"):
        inproc.alignment({"id": "gan", "observer": {"align": "batch"}})
    monkeypatch.setenv("OBSERVER_ALIGN", "")  # the caller's setting wins
    assert inproc.alignment({"id": "gan", "observer": {"align": "epoch"}}) == ""


EPOCHS = textwrap.dedent('''
    import time, torch
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    d, g = torch.nn.Linear(16, 1), torch.nn.Linear(16, 16)  # a GAN's shape: two models,
    opt_d = torch.optim.SGD(d.parameters(), lr=0.01)        # two optimizers, three backward()
    opt_g = torch.optim.SGD(g.parameters(), lr=0.01)        # calls an iteration
    loader = DataLoader(TensorDataset(torch.randn(32, 16), torch.randn(32, 1)), batch_size=4)
    for epoch in range(10**6):
        time.sleep(0.03)  # the epoch's stall: its workers starting
        for i, (x, y) in enumerate(loader):
            time.sleep(0.01)
            opt_d.zero_grad()
            torch.nn.functional.mse_loss(d(x), y).backward()
            torch.nn.functional.mse_loss(d(g(x).detach()), -y).backward()
            opt_d.step()
            opt_g.zero_grad()
            torch.nn.functional.mse_loss(d(g(x)), y).backward()
            opt_g.step()
            print(f"[{epoch}][{i}] at", flush=True)
        if epoch >= 40 or time.perf_counter() > START + 120:
            break
''')


def test_blocks_aligned_to_epochs_end_at_the_same_place_of_an_epoch(inproc, tmp_path,
                                                                   monkeypatch):
    """End to end on the CPU with "align": "epoch": the toggler switches in the first backward
    after each epoch's third fetch (ALIGN_AFTER 3; fetches, not backward calls, of which a GAN
    makes three an iteration), at most once an epoch, so the line just before every switch is
    the epoch's second; time blocks shorter than an epoch would land anywhere."""
    import re

    # blocks of 0.02 s: shorter than an epoch (8 x 10 ms + 30 ms)
    _toy(tmp_path, monkeypatch, EPOCHS, SETTLE_S="0.2", BLOCK_S="0.02", ALIGN_AFTER="3",
         MIN_VALUES="1")
    monkeypatch.delenv("OBSERVER_ALIGN", raising=False)
    entry = {"id": "toy", "command": ["train.py"], "observer": {"align": "epoch"},
             "own_log": {"regex": r"^\[\d+\]\[\d+\]", "unit": "lines", "group": 0}}
    seen = []
    real = inproc.run_gpu._run

    def keep(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(inproc.run_gpu, "_run", keep)
    row = inproc.run_one(entry, tmp_path, [])
    assert row["code"] == 0, row["tail"]
    assert row["align"] == "epoch" and row["switches"] >= 6
    before, last = [], None
    for _, line in seen[-1]["lines"]:
        if line.startswith(inproc.MARK) and line.split()[1] in ("on", "off"):
            before.append(last)
        elif m := re.match(r"\[(\d+)\]\[(\d+)\]", line):
            last = (int(m.group(1)), int(m.group(2)))
    assert {p[1] if p else None for p in before} == {1}, before  # None: before any line
    epochs = [e for e, _ in before]
    assert epochs == sorted(set(epochs)), epochs  # once an epoch at most
    # each block holds its epoch's stall (30 ms over a 10 ms step), and mostly one only: a
    # host loaded by other jobs may stretch a plain step past the bar in a block or two (two
    # seen once), not in most (time blocks of 0.02 s would hold none in most blocks)
    full = [b["values"] for b in row["blocks"][1:]]
    stalls = [sum(v >= 35.0 for v in vals) for vals in full]
    assert full and min(stalls) >= 1 and sum(n > 1 for n in stalls) <= len(stalls) // 3, full


WORKER_PACED = textwrap.dedent('''
    import time, torch
    from torch.utils.data import DataLoader, Dataset
    class Slow(Dataset):  # one worker makes a batch in about 10 ms; the step takes far less
        def __len__(self):
            return 4 * 10**5
        def __getitem__(self, i):
            time.sleep(0.0025)
            return torch.randn(16), torch.randn(1)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for i, (x, y) in enumerate(DataLoader(Slow(), batch_size=4, num_workers=1,
                                          prefetch_factor=4)):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        print(f"[{i}] at", flush=True)
        if time.perf_counter() > START + 6:
            break
''')


def _toy(tmp_path, monkeypatch, code: str, **env: str) -> None:
    """The toy script in the corpus folder `toy`, and the check's settings for it."""
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "train.py").write_text("import time\nSTART = time.perf_counter()\n" + code)
    for name, value in env.items():
        monkeypatch.setenv(f"OBSERVER_{name}", value)


def test_a_switchs_pause_is_not_read_as_a_faster_block(inproc, tmp_path, monkeypatch):
    """A switch holds the main thread (a session begun: about 60 ms, the `pause` piece here,
    which does nothing else), while the DataLoader's worker goes on filling its prefetch: the
    next four fetches take ready batches at once. Blocks read from the toggler's `settled` mark
    (the loader's stock, 1 worker x 4, taken) read the same pace in `on` and `off`: read from
    the switch, each `on` block would be about a quarter faster."""
    _toy(tmp_path, monkeypatch, WORKER_PACED, SETTLE_S="0.5", BLOCK_S="0.15", PIECE="pause",
         MIN_VALUES="3")
    monkeypatch.delenv("OBSERVER_ALIGN", raising=False)
    entry = {"id": "toy", "command": ["train.py"],
             "own_log": {"regex": r"^\[\d+\] at", "unit": "lines", "group": 0}}
    row = inproc.run_one(entry, tmp_path, [])
    assert row["code"] == 0, row["tail"]
    assert row["settle"] == 4 and row["switches"] >= 10
    mean = {state: statistics.fmean(v for b in row["blocks"][1:] if b["state"] == state
                                    for v in b["values"]) for state in ("on", "off")}
    assert mean["on"] / mean["off"] == pytest.approx(1.0, abs=0.08), mean


def test_the_spacing_of_a_counting_log_is_a_value_too(inproc):
    entry = {"own_log": {"regex": r"^\[\d+/\d+\]", "unit": "lines", "group": 0, "per": 2}}
    lines = [(0.0, "[1/9] x\n"), (0.01, "other\n"), (0.02, "[2/9] x\n"), (0.06, "[3/9] x\n")]
    got = inproc.values(entry, lines)
    assert [(a, b) for a, b, _ in got] == [(0.0, 0.02), (0.02, 0.06)]
    assert [ms for _, _, ms in got] == pytest.approx([10.0, 20.0])


def test_a_finer_log_of_the_script_wins_for_the_observer(inproc):
    """LBFGS logs a step every 20-30 s but a loss at every closure evaluation: the observer
    reads the finer one, where the manifest names it."""
    entry = {"own_log": {"regex": r"^STEP:", "unit": "steps", "group": 0},
             "observer": {"own_log": {"regex": r"^loss:", "unit": "lines", "group": 0}}}
    lines = [(0.0, "STEP:  0\n"), (0.1, "loss: 0.5\n"), (0.3, "loss: 0.4\n"),
             (0.6, "test loss: 0.4\n"), (0.7, "STEP:  1\n"), (0.8, "loss: 0.3\n")]
    got = inproc.values(entry, lines)
    assert [(a, b) for a, b, _ in got] == [(0.1, 0.3), (0.3, 0.8)]  # never "test loss:"
    assert [ms for _, _, ms in got] == pytest.approx([200.0, 500.0])
    del entry["observer"]
    assert [(a, b) for a, b, _ in inproc.values(entry, lines)] == [(0.0, 0.7)]


SCRIPT = textwrap.dedent('''
    import time, torch
    from torch.optim import optimizer as optim
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 16), torch.randn(32, 1)
    seen, flips = False, 0
    for i in range(1, 10**8):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # the capture's baseline ends each step at a torch hook after the optimizer step
        wrapped = bool(optim._global_optimizer_post_hooks)
        flips, seen = flips + (wrapped != seen), wrapped
        if i % 10 == 0:  # "ms/batch" 1 while the capture's baseline runs, else 2
            print(f"| ms/batch {1 if wrapped else 2}")
        if flips >= 6 or time.perf_counter() > START + 120:  # a loaded machine starts slowly
            break
''')


def test_the_capture_pieces_really_switch_in_the_scripts_process(inproc, tmp_path, monkeypatch):
    """End to end on the CPU: the toggler starts after settling and switches at backward()'s
    end; every value measured in an `on` block saw the capture's baseline hook, none in an
    `off` block did, and the rounds read that (1 against 2)."""
    _toy(tmp_path, monkeypatch, SCRIPT, SETTLE_S="0.3", BLOCK_S="0.3", MIN_VALUES="1")
    row = inproc.run_one(ENTRY, tmp_path, [])
    assert row["code"] == 0, row["tail"]
    assert row["switches"] >= 4
    seen = {state: {v for b in row["blocks"] if b["state"] == state for v in b["values"]}
            for state in ("on", "off")}
    assert seen == {"on": {1.0}, "off": {2.0}}
    assert row["rounds"] and set(row["rounds"]) == {0.5}


def test_the_manifest_gives_each_script_its_run_length_block_and_launcher(inproc, monkeypatch):
    monkeypatch.delenv("OBSERVER_BLOCK_S", raising=False)
    monkeypatch.delenv("OBSERVER_TIMEOUT_S", raising=False)
    torchrun = {"id": "ddp", "launcher": ["-m", "torch.distributed.run"],
                "command": ["ddp.py", "20", "100"],
                "observer": {"inprocess_command": ["ddp.py", "500", "1000"],
                             "inprocess_args": ["--ignored"], "block_s": 2.0}}
    cmd, block, stop = inproc.command(torchrun, [])
    # a positional run length: the whole command is the manifest's, under the script's launcher
    assert cmd[1:] == ["-m", "torch.distributed.run", "ddp.py", "500", "1000"]
    assert (block, stop) == (2.0, 600.0)
    plain = {"id": "lm", "command": ["main.py", "--epochs", "1"],
             "observer": {"inprocess_args": ["--epochs", "30"], "inprocess_stop_s": 60}}
    cmd, block, stop = inproc.command(plain, [])
    assert cmd[1:] == ["main.py", "--epochs", "1", "--epochs", "30"] and (block, stop) == (0.5, 60)
    assert inproc.command(plain, ["--epochs", "2"])[0][-1] == "2"  # EXTRA replaces the manifest's
    monkeypatch.setenv("OBSERVER_BLOCK_S", "0.25")  # the caller's setting wins
    assert inproc.command(torchrun, [])[1] == 0.25


def test_every_corpus_script_has_an_inprocess_run_that_holds_blocks(inproc):
    """Each script of the corpus is in the observer check with a run long enough for it."""
    import json

    from benchmark_modules import load_benchmark

    manifest = json.loads(load_benchmark("corpus/run_gpu").MANIFEST.read_text())
    for entry in manifest["scripts"]:
        obs = entry.get("observer") or {}
        assert obs.get("inprocess_args") or obs.get("inprocess_command"), entry["id"]


def test_a_script_run_in_several_processes_pools_their_rounds(inproc, monkeypatch):
    """A script whose steady stretch is short runs it in several processes, one after the
    other; every process's rounds count, and a process that failed is not hidden."""
    rows = iter([
        {"command": ["train.py"], "block_s": 4.0, "code": 0, "switches": 10,
         "rounds": [1.0, 1.01], "tail": "", "align": ""},
        {"command": ["train.py"], "block_s": 4.0, "code": 1, "switches": 4,
         "rounds": [0.99], "tail": "Traceback: boom", "align": ""},
        {"command": ["train.py"], "block_s": 4.0, "code": "timeout", "switches": 12,
         "rounds": [1.02, 1.0, 1.0], "tail": "", "align": ""},
    ])
    monkeypatch.setattr(inproc, "run_one", lambda entry, corpus, extra: next(rows))
    entry = {"id": "lbfgs", "observer": {"processes": 3}}
    got = inproc.run_processes(entry, None, [])
    assert got["rounds"] == [1.0, 1.01, 0.99, 1.02, 1.0, 1.0]
    assert got["pooled"]["pairs"] == 6 and got["switches"] == 26
    assert got["code"] == 1 and got["tail"] == "Traceback: boom"
    assert len(got["processes"]) == 3
    monkeypatch.setenv("OBSERVER_PROCESSES", "1")  # the caller's setting wins: one process
    rows = iter([{"command": [], "block_s": 1.0, "code": 0, "switches": 2, "rounds": [1.0],
                  "align": "", "tail": ""}])
    assert inproc.run_processes(entry, None, [])["rounds"] == [1.0]


def test_the_check_pins_itself_and_the_script_to_the_cpus_asked(monkeypatch):
    """$OBSERVER_CPUS pins the check's process, so the script and its workers inherit it."""
    import os

    from benchmark_modules import load_benchmark

    run_gpu = load_benchmark("corpus/run_gpu")
    before = os.sched_getaffinity(0)
    one = min(before)
    try:
        monkeypatch.delenv("OBSERVER_CPUS", raising=False)
        assert run_gpu.pin_from_env() is None and os.sched_getaffinity(0) == before
        monkeypatch.setenv("OBSERVER_CPUS", str(one))
        assert run_gpu.pin_from_env() == [one]
        assert os.sched_getaffinity(0) == {one}
    finally:
        os.sched_setaffinity(0, before)


def test_a_failed_runs_output_is_kept_without_machine_paths(inproc, monkeypatch, tmp_path):
    """A crash's tail and first error go into committed evidence: the checkout, the corpus
    folder, the interpreter, site-packages, the standard library and the system's libraries
    are named, never where they lie on the machine that ran it."""
    out = ("Train Epoch: 3\nterminate called after throwing an instance of 'c10::Error'\n"
           "frame #44: __libc_start_main + 0x8b (0x7f in /lib/x86_64-linux-gnu/libc.so.6)\n"
           "frame #45: _start + 0x25 (0x657a05 in /opt/x/.venv/bin/python3)\n"
           'Traceback (most recent call last):\n  File "/home/u/co/.corpus/vae-mnist/main.py"\n'
           '  File "/home/u/co/jupyter_gpuprof/capture/stalls.py", line 148\n'
           '  File "/opt/x/.venv/lib/python3.12/site-packages/torch/utils/data/dataloader.py"\n'
           '  File "/usr/lib/python3.12/queue.py", line 180, in get\nRuntimeError: boom\n')
    run_gpu = inproc.run_gpu
    monkeypatch.setattr(run_gpu, "script_env", lambda entry: {})
    monkeypatch.setattr(run_gpu, "make_data", lambda entry, folder: None)
    monkeypatch.setattr(run_gpu, "_run", lambda cmd, cwd, env, timeout:
                        {"code": 1, "out": out, "lines": []})
    entry = {**ENTRY, "id": "vae-mnist", "command": ["main.py"]}
    row = inproc.run_one(entry, tmp_path, [])
    for text in (row["tail"], row["first_error"]):
        assert "terminate called" in text or "Traceback" in text
        for machine in ("/home/u", "/opt/x", "/usr/lib", "/lib/x86_64"):
            assert machine not in text, (machine, text)
    assert '"main.py"' in row["tail"] and "jupyter_gpuprof/capture/stalls.py" in row["tail"]
    assert "<site-packages>/torch/utils/data/dataloader.py" in row["tail"]
    assert "<stdlib>/queue.py" in row["tail"] and "in python)" in row["tail"]


def test_an_on_block_is_read_once_its_pieces_are_past_their_set_up(monkeypatch):
    """A session begun at a switch sets up over its first steps (its baseline's clock starts
    after them), which no step of a capture's baseline holds: the toggler prints `settled`
    only once the pieces say they are in the state a capture times, and at once after `off`."""
    import io

    import torch

    toggle = load_benchmark("corpus/observer_toggle")

    class Pieces:
        def __init__(self):
            self.calls = 0

        def timing(self):
            self.calls += 1
            return self.calls > 3  # set up after three backward() calls

        def on(self, piece):
            self.calls = 0
            return lambda: None

    out = io.StringIO()
    data = torch.utils.data
    # what the toggler wraps, put back after the test
    monkeypatch.setattr(torch.autograd, "backward", torch.autograd.backward)
    monkeypatch.setattr(data.DataLoader, "__iter__", data.DataLoader.__iter__)
    monkeypatch.setattr(data.dataloader._BaseDataLoaderIter, "__next__",
                        data.dataloader._BaseDataLoaderIter.__next__)
    t = toggle.Toggler(0.0, 1e9, pieces=Pieces, out=out)  # blocks switched by hand here
    t.install(torch)
    w = torch.ones(1, requires_grad=True)
    seen = []  # the marks after each backward()
    for k in range(12):
        if k in (0, 6):
            t.switch()
        torch.autograd.backward((w * 2).sum())
        seen.append([line.split()[1] for line in out.getvalue().splitlines()])
    assert seen[-1] == ["on", "settled", "off", "settled"], seen[-1]
    # `on` at step 0: settled in the backward of step 3, the pieces' fourth look; `off` at
    # step 6: settled in its first backward
    assert [len(m) for m in seen] == [1, 1, 1, 2, 2, 2, 4, 4, 4, 4, 4, 4]

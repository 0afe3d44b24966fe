"""The compile and graphs tries (tries/appliers/compile.py) in a real `run --try` process:
the model inside a framework's wrapper, and a loop with no optimizer."""

from __future__ import annotations

import pytest
from script_tries import STEPS, run_try_on

FABRIC = """
import torch
from torch import nn
from lightning.fabric import Fabric
torch.manual_seed(0)
fabric = Fabric(accelerator="cpu", devices=1)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
model, opt = fabric.setup(model, opt)
for i in range(N_STEPS):
    x, y = torch.randn(16, 32), torch.randn(16, 1)
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    fabric.backward(loss)
    opt.step()
    print("step", i, type(loss.grad_fn).__name__, flush=True)
""".replace("N_STEPS", str(STEPS + 2))


def test_compile_under_lightning_fabric_compiles_the_model_not_its_wrapper(tmp_path):
    """Fabric's `_FabricModule` writes attributes through to the model it wraps: the compiled
    wrapper's forward became the model's own, which called the wrapper again (Lightning's MNIST
    example on the H200: `RecursionError` inside Dynamo). The model inside is compiled."""
    path = tmp_path / "fabric_train.py"
    path.write_text(FABRIC)
    rc, run = run_try_on(tmp_path, path, "compile", "--warmup", "3")
    (t,) = run.meta.tries
    assert "error" not in t, t.get("error")
    assert t["applied"] == ["torch.compile(Sequential) inside _FabricModule"]
    assert t["compiled_graphs"] > 0 and len(t["step_ms"]) == 4


BY_HAND = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
for i in range(N_STEPS):
    x, y = torch.randn(16, 32), torch.randn(16, 1)
    model.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-0.01)
    print("step", i, type(loss.grad_fn).__name__, flush=True)
"""


def test_compile_finds_the_model_of_a_loop_that_updates_its_parameters_by_hand(tmp_path):
    """The word-level LM example has no optimizer: the try waited for an optimizer step that
    never came ("no module to compile"). It compiles once the loop steps by backward(), as
    the capture counts its steps."""
    from jupyter_gpuprof.capture.training import BACKWARD_STEPS_AFTER

    path = tmp_path / "by_hand.py"
    path.write_text(BY_HAND.replace("N_STEPS", str(BACKWARD_STEPS_AFTER + STEPS + 4)))
    rc, run = run_try_on(tmp_path, path, "compile")
    (t,) = run.meta.tries
    assert "error" not in t, t.get("error")
    assert t["applied"] == ["torch.compile(Sequential)"] and t["compiled_graphs"] > 0


SELF_COMPILED = """
import torch
from torch import nn
torch.manual_seed(0)
model = torch.compile(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(N_STEPS):
    x, y = torch.randn(16, 32), torch.randn(16, 1)
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    print("step", i, flush=True)
""".replace("N_STEPS", str(STEPS + 6))


def test_a_model_the_script_compiles_is_never_compiled_twice(tmp_path):
    """nanoGPT with --compile=True: the compile try compiled the compiled model again and the
    graphs try died in Dynamo. compile says why it measures nothing; graphs gives the
    script's own torch.compile call the mode instead."""
    path = tmp_path / "compiled.py"
    path.write_text(SELF_COMPILED)
    rc, run = run_try_on(tmp_path, path, "compile,graphs")
    tries = {t["fix"]: t for t in run.meta.tries}
    assert "compiles OptimizedModule itself" in tries["compile"]["error"]
    assert "--try graphs" in tries["compile"]["error"]
    graphs = tries["graphs"]
    assert "error" not in graphs, graphs.get("error")
    assert graphs["applied"] == [
        "mode='reduce-overhead' on the script's own torch.compile call (was None)"]


def test_an_iteration_ends_with_the_last_optimizer_to_step_in_it():
    """CUDA-graph memory is reused from the mark on: a GAN marks after its generator's
    update (its fake batch is read again after the discriminator's), a single optimizer at
    each step, once the first repeat shows the cycle."""
    from jupyter_gpuprof.tries.appliers.graphs import IterationEnds

    gan = IterationEnds()
    assert [gan.ends_iteration(o) for o in ["D", "G", "D", "G", "D", "G"]] == [
        False, False, False, True, False, True]
    one = IterationEnds()
    assert [one.ends_iteration(o) for o in ["A", "A", "A"]] == [False, True, True]


def test_an_iteration_counted_by_the_run_is_marked_from_the_first_one_on():
    """DCGAN and nanoGPT (accumulation) under `--try graphs` on the H200 crashed in their
    second iteration ("accessing tensor output of CUDAGraphs that has been overwritten"): the
    cycle was learnt only when an optimizer stepped again, so the first iteration's end went
    unmarked. With the run's own count the first end is marked too."""
    from jupyter_gpuprof.tries.appliers.graphs import IterationEnds, optimizers_per_iteration

    gan = IterationEnds(optimizers_per_iteration({"optimizers_per_step": 2.0}))
    assert [gan.ends_iteration(o) for o in ["D", "G", "D", "G"]] == [False, True, False, True]
    one = IterationEnds(optimizers_per_iteration({"optimizers_per_step": 1.0}))
    assert [one.ends_iteration(o) for o in ["A", "A", "A"]] == [True, True, True]
    # counted as 2, but the loop repeats its first optimizer at once: the repeat decides
    odd = IterationEnds(2)
    assert [odd.ends_iteration(o) for o in ["A", "A", "A"]] == [False, True, True]
    assert optimizers_per_iteration({}) is None
    assert optimizers_per_iteration({"optimizers_per_step": 0.0}) is None


def test_the_graphs_try_is_given_the_runs_loop(tmp_path, monkeypatch):
    """The try process hands the run's `training` block to the fix it switches on, a stack's
    parts included."""
    import torch as real_torch

    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.store import Run, RunMeta
    from jupyter_gpuprof.tries import process, startup

    seen = []

    class Stop(Exception):
        pass

    def fake_apply(name, torch, loop=None):
        seen.append(dict(loop or {}))
        raise Stop

    monkeypatch.setattr(process, "apply_fix", fake_apply)
    run = Run(tmp_path, RunMeta(name="gan", training={"optimizers_per_step": 2.0}))
    with pytest.raises(SystemExit):  # the fake fix cannot be applied: the try ends there
        process.begin_try("graphs", CaptureSettings(mode="script"), run)
    assert seen == [{"optimizers_per_step": 2.0}]
    graphs = startup.appliers.load("graphs").Startup(real_torch, {"optimizers_per_step": 2.0})
    assert graphs.loop["optimizers_per_step"] == 2.0
    stacked = startup.Stacked(real_torch, "loader+graphs", {"optimizers_per_step": 3.0})
    assert [p.loop["optimizers_per_step"] for p in stacked.parts] == [3.0, 3.0]


def test_a_model_dynamo_skips_for_its_lstm_is_named_in_the_problem():
    """mnist_rnn on the H200: Dynamo skipped the LSTM's forward, no graph was compiled; the try
    says which layer is why (try_remedies gives the remedy for it)."""
    import torch as real_torch

    from jupyter_gpuprof.advice.try_remedies import remedy_for
    from jupyter_gpuprof.tries.appliers.compile import Startup

    fix = Startup(real_torch)
    fix.applied, fix.compiled_already, fix._graphs_before = ["torch.compile(Net)"], [], 10**9
    fix.targets = [real_torch.nn.Sequential(real_torch.nn.LSTM(4, 8), real_torch.nn.Linear(8, 2))]
    why = fix.problem()
    assert why.endswith("its forward runs an RNN, GRU or LSTM (LSTM), which Dynamo skips")
    assert "allow_rnn" in remedy_for(why).remedy
    fix.targets = [real_torch.nn.Linear(8, 2)]
    assert fix.problem() == "torch.compile compiled no graph of the step's modules"


GAN = """
import torch
from torch import nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))

    def forward(self, z):
        return self.net(z)


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


torch.manual_seed(0)
g, d = Gen(), Disc()
opt_g = torch.optim.Adam(g.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(d.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for i in range(N_STEPS):
    real, z = torch.randn(16, 16), torch.randn(16, 8)
    d.zero_grad()
    fake = g(z)
    loss_d = bce(d(real), torch.ones(16)) + bce(d(fake.detach()), torch.zeros(16))
    loss_d.backward()
    opt_d.step()
    g.zero_grad()
    loss_g = bce(d(fake), torch.ones(16))
    loss_g.backward()
    opt_g.step()
    print("step", i, flush=True)
""".replace("N_STEPS", str(STEPS + 2))


def test_compile_compiles_both_models_of_a_gan(tmp_path):
    """DCGAN on the H200: the try compiled the discriminator at the first optimizer step and
    left the generator, which only the second optimizer trains, eager."""
    path = tmp_path / "gan.py"
    path.write_text(GAN)
    rc, run = run_try_on(tmp_path, path, "compile", "--warmup", "3")
    (t,) = run.meta.tries
    assert "error" not in t, t.get("error")
    assert t["applied"] == ["torch.compile(Disc)", "torch.compile(Gen)"]

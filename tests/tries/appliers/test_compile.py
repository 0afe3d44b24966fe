"""The compile and graphs tries (tries/appliers/compile.py) in a real `run --try` process:
the model inside a framework's wrapper, and a loop with no optimizer."""

from __future__ import annotations

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

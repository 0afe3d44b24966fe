"""The checkpoint try (tries/appliers/checkpoint.py): the repeated layers recomputed in backward,
the training unchanged, and a model it cannot checkpoint reported, never measured as a gain."""

from __future__ import annotations

import pytest
import torch
from script_tries import STEPS, run_try_on

from jupyter_gpuprof.tries.appliers import checkpoint as ck
from jupyter_gpuprof.tries.notebook import run_tries


class Block(torch.nn.Module):
    """One layer: Linear + GELU + dropout (dropout: the recompute must replay its RNG)."""

    calls = 0

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.act = torch.nn.GELU()
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Block.calls += 1
        return x + self.drop(self.act(self.fc(x)))


class Net(torch.nn.Module):
    def __init__(self, layers: int = 4) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(Block() for _ in range(layers))
        self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Linear(4, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.mlp(x).pow(2).mean()


def _step(model: torch.nn.Module, x: torch.Tensor) -> tuple[float, list[torch.Tensor], int]:
    """Loss, gradients and layer forwards of one forward + backward from the same RNG state."""
    model.zero_grad(set_to_none=True)
    Block.calls = 0
    torch.manual_seed(1)
    loss = model(x)
    loss.backward()
    return float(loss.detach()), [p.grad.clone() for p in model.parameters()], Block.calls


def test_checkpointed_layers_are_recomputed_in_backward_with_the_same_loss_and_gradients():
    torch.manual_seed(0)
    model, x = Net(), torch.randn(5, 8)
    loss, grads, calls = _step(model, x)
    assert calls == 4
    done, undo, wrapped = ck.checkpoint_model(torch, model)
    assert done == ("torch.utils.checkpoint of the 4 Block layers in Net.layers "
                    "(use_reentrant=False)")  # the blocks, not the Sequential's two Linears
    ck_loss, ck_grads, ck_calls = _step(model, x)
    assert ck_calls == 8  # each layer's forward ran again in backward
    assert wrapped is not None and wrapped.calls == 4
    assert abs(ck_loss - loss) <= 1e-6
    assert all(torch.allclose(a, b, atol=1e-6, rtol=0) for a, b in zip(grads, ck_grads,
                                                                       strict=True))
    undo()
    assert _step(model, x)[2] == 4 and "forward" not in vars(model.layers[0])


def test_no_grad_forwards_are_not_checkpointed():
    model = Net()
    _, _, wrapped = ck.checkpoint_model(torch, model)
    with torch.no_grad():
        model(torch.randn(2, 8))
    assert wrapped is not None and wrapped.calls == 0


def test_a_model_without_repeated_layers_is_refused():
    flat = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Flatten())
    assert ck.repeated_layers(flat) == ("", [])
    with pytest.raises(LookupError, match="no repeated layers to checkpoint"):
        ck.checkpoint_model(torch, flat)


class HuggingFaceLike(Net):
    """What the fix reads of a transformers PreTrainedModel that supports checkpointing."""

    supports_gradient_checkpointing = True
    is_gradient_checkpointing = False

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[object] = []

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self.asked.append(gradient_checkpointing_kwargs)
        self.is_gradient_checkpointing = True

    def gradient_checkpointing_disable(self):
        self.asked.append("disable")
        self.is_gradient_checkpointing = False


def test_a_hugging_face_model_checkpoints_its_own_layers():
    model = HuggingFaceLike()
    done, undo, wrapped = ck.checkpoint_model(torch, model)
    assert wrapped is None and "forward" not in vars(model.layers[0])  # its own, not ours
    assert done.startswith("HuggingFaceLike.gradient_checkpointing_enable()")
    assert model.asked == [{"use_reentrant": False}]
    undo()
    assert model.asked[-1] == "disable" and not model.is_gradient_checkpointing


STEP = """
x = torch.randn(16, 8)
loss = model(x)
loss.backward()
opt.step()
opt.zero_grad()
"""


def _kernel(model: torch.nn.Module) -> tuple[dict[str, object], object]:
    torch.manual_seed(0)
    ns: dict[str, object] = {"torch": torch, "model": model,
                             "opt": torch.optim.SGD(model.parameters(), lr=0.01)}
    code = compile(STEP, "<cell>", "exec")
    return ns, lambda: exec(code, ns)


def test_notebook_try_checkpoints_the_cell_s_model_keeps_its_losses_and_puts_it_back():
    torch.manual_seed(0)
    model = Net().eval()  # no dropout: the cell's own RNG draws x, the losses must match exactly
    ns, step = _kernel(model)
    control, (t,) = run_tries(step, ns, ["checkpoint"], warmup=2, steps=2)
    assert control is not None and "error" not in t, t.get("error")
    assert t["loss_rel_diff"] is not None and t["loss_rel_diff"] <= 1e-6
    assert t["peak_memory_bytes"] is None  # CPU: max_memory_allocated is CUDA's
    assert "forward" not in vars(model.layers[0])  # put back after the try
    Block.calls = 0
    step()
    assert Block.calls == 4  # one forward per layer again


def test_notebook_try_refuses_a_compiled_model_with_the_reason():
    ns, step = _kernel(torch.compile(Net(), backend="eager"))
    _, (t,) = run_tries(step, ns, ["checkpoint"], warmup=1, steps=1, control=False)
    assert "checkpointing must be switched on before torch.compile" in t["error"]


def test_notebook_try_of_a_model_without_layers_is_an_error_not_a_gain():
    ns, _ = _kernel(torch.nn.Sequential(torch.nn.Linear(8, 1), torch.nn.Flatten(0)))
    code = compile(STEP.replace("loss = model(x)", "loss = model(x).pow(2).mean()"), "<c>", "exec")
    _, (t,) = run_tries(lambda: exec(code, ns), ns, ["checkpoint"], warmup=1, steps=1,
                        control=False)
    assert t["error"] == ("LookupError: no module the step calls has repeated layers to "
                          "checkpoint")
    assert "step_ms" not in t


SCRIPT = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = nn.GELU()

    def forward(self, x):
        print("layer", torch.is_grad_enabled(), flush=True)
        return x + self.act(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 16), torch.randn(32, 1)
for i in range(N_STEPS):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step", i, repr(loss.item()), flush=True)
""".replace("N_STEPS", str(STEPS + 2))


def test_run_try_checkpoint_recomputes_the_layers_keeps_the_losses_and_says_so(tmp_path, capfd):
    path = tmp_path / "layers.py"
    path.write_text(SCRIPT)
    rc, run = run_try_on(tmp_path, path, "checkpoint")
    assert rc == 0 and run.meta.status == "complete", run.meta.error
    (t,) = run.meta.tries
    assert "error" not in t, t.get("error")
    assert t["applied"] == ["torch.utils.checkpoint of the 3 Block layers in Net.layers "
                            "(use_reentrant=False)"]
    assert len(t["step_ms"]) == 4 and t["loss_rel_diff"] is not None
    assert t["loss_rel_diff"] <= 1e-6
    log = (run.path / "tries" / "checkpoint.log").read_text().splitlines()
    # the first step (before the first optimizer step) runs as it is; then each layer's
    # forward runs again in backward
    per_step = [sum(1 for _ in g) for g in _layer_calls(log)]
    assert per_step[0] == 3 and set(per_step[1:]) == {6}
    # a memory fix's try carries its peak against the control's: not measured on a CPU
    assert t["memory"]["peak_bytes"] is None and t["memory"]["change_bytes"] is None
    assert isinstance(t["memory"]["step_time_change_pct"], float)
    out, _ = capfd.readouterr()
    assert "checkpoint" in out and "peak memory not measured on CPU; step time" in out


def _layer_calls(log: list[str]) -> list[list[str]]:
    """The `layer` lines of each step, by step (a step's line ends it)."""
    steps, now = [], []
    for line in log:
        if line.startswith("layer True"):
            now.append(line)
        elif line.startswith("step"):
            steps.append(now)
            now = []
    return steps


def test_run_try_checkpoint_of_a_compiled_model_gives_the_reason(tmp_path):
    path = tmp_path / "compiled.py"
    path.write_text(SCRIPT.replace("model = Net()",
                                   "model = torch.compile(Net(), backend='eager')"))
    rc, run = run_try_on(tmp_path, path, "checkpoint")
    (t,) = run.meta.tries
    assert rc == 0 and t["error"].startswith("the script compiles OptimizedModule itself: "
                                             "checkpointing must be switched on before")
    assert "step_ms" not in t

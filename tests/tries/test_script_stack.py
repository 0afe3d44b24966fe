"""`run --try` stacks the fixes: the best one kept, the next tried on top in one more process."""

from __future__ import annotations

import sys

from script_tries import try_log

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

#: a loader whose samples each take 4 ms in __getitem__ (workers overlap them), a tiny model
TRAIN = """
import time
import torch
from torch import nn


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        time.sleep(0.004)
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), int(i % 4)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(Slow(), batch_size=8)
    print("tf32", torch.backends.cuda.matmul.allow_tf32)
    for i, (x, y) in enumerate(loader):
        if i == 60:
            break
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_the_best_fix_is_kept_and_the_next_one_tried_on_top_in_one_more_process(
        tmp_path, capfd):
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    root = tmp_path / "runs"
    # 32 baseline steps: the loader fix's steps come in bursts (eight workers finish a batch
    # each at about the same time, every 8 steps), so a few bursts could read "not
    # significant" (CI: 37.8 → 13.9 ms median at n = 8 a side; 36.5 → 20.6 ms at n = 16)
    argv = ["run", "--runs-root", str(root), "--steps", "32", "--warmup", "2", "--wait", "0",
            "--prof-warmup", "0", "--active", "2", "--try", "tf32,loader", "--",
            sys.executable, str(path)]
    assert main(argv) == 0
    out, err = capfd.readouterr()
    (run,) = RunStore(root).list()
    tries = {t["fix"]: t for t in run.meta.tries}
    assert tries["loader"]["change"]["significant"], tries["loader"]["change"]
    stack = run.meta.stack
    assert stack is not None and stack["fixes"][0] == "loader"
    (step,) = stack["steps"]
    assert step["fix"] == "loader+tf32" and step["stacked_on"] == ["loader"]
    # both fixes were on in that process, and its result has a file of its own
    assert try_log(run, "loader+tf32")["tf32"] == [["True"]]
    assert (run.path / "tries" / "loader+tf32.json").is_file()
    # what each part changed, the loader's too (noted when the script built its DataLoader)
    assert "TF32 allowed for matmuls and cuDNN" in step["applied"]
    assert any(a.startswith("DataLoader num_workers=") for a in step["applied"])
    # TF32 changes nothing on a CPU: on top of the loader fix it is not a significant gain
    assert step["kept"] is False and "not a significant gain" in step["why"]
    assert stack["fixes"] == ["loader"] and "num_workers=8" in stack["code"]
    assert stack["gain_pct"] > 20
    assert run.read_summary()["stack"]["fixes"] == ["loader"]
    assert "Fixes stacked" in out and "All kept fixes together (loader)" in out
    assert "gpuprof: stack: tf32 on top of loader" in err

"""The parent <-> child protocol of `jupyter gpuprof run`: every environment variable, named once.

The launcher owns it: `jupyter gpuprof run` (launcher/run.py) starts the user's command with the
bootstrap folder first on its PYTHONPATH, and the bootstrap's sitecustomize imports
launcher/autorun.py in the child, which reads these. It is a leaf beside the launcher, not inside
it, because the recording reads one of them too (`profile()` honours `--ranks`) and must not
import upward. (The bootstrap spells ENV_RUN_DIR out itself: it runs before the package can be
imported; a test holds the two to one spelling.)
"""

from __future__ import annotations

from pathlib import Path

#: the run folder the child captures into (set: the process is under `jupyter gpuprof run`)
ENV_RUN_DIR = "JUPYTER_GPUPROF_RUN_DIR"
#: the capture settings (`CaptureSettings` keyword arguments) as JSON
ENV_SETTINGS = "JUPYTER_GPUPROF_SETTINGS"
#: `run --try`: the process is a try of this fix (tries/process.py), not a capture
ENV_TRY = "JUPYTER_GPUPROF_TRY"
#: `run --try`: the label the first losses are recorded under ("original" or the fix's name)
ENV_LOSSES = "JUPYTER_GPUPROF_TRY_LOSSES"
#: `--ranks`: only these ranks capture (parse_ranks syntax; "none": no rank)
ENV_RANKS = "JUPYTER_GPUPROF_RANKS"
#: `--stop-after-capture`: the command ends as soon as its capture is written
ENV_STOP = "JUPYTER_GPUPROF_STOP_AFTER_CAPTURE"
#: the user's override of how long one try may run, in seconds
ENV_TRY_TIMEOUT = "JUPYTER_GPUPROF_TRY_TIMEOUT_S"
#: a try process's own random token: whatever it started, a daemon that left its process group
#: too, is found by it and stopped when the try ends (tries/supervise.py)
ENV_TRY_TOKEN = "JUPYTER_GPUPROF_TRY_TOKEN"
#: what the child may not inherit from a run it runs inside: each run sets its own
PER_RUN = (ENV_LOSSES, ENV_RANKS, ENV_TRY, ENV_STOP, ENV_TRY_TOKEN)
#: the folder put first on the child's PYTHONPATH (its sitecustomize starts the capture)
BOOTSTRAP = Path(__file__).resolve().parent / "launcher" / "bootstrap"

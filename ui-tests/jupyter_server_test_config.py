"""Jupyter server settings of the Galata run (``jlpm start``).

Token and XSRF off, port 8888 (or $GALATA_PORT) without retries, a temporary root_dir: galata's defaults.
"""

import os
import sys
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

c = get_config()  # noqa: F821 -- injected by traitlets when it loads this file
configure_jupyter_server(c)

c.ServerApp.ip = "127.0.0.1"
# GALATA_PORT lets two checkouts run their UI tests side by side (playwright.config.js reads it too).
c.ServerApp.port = int(os.environ.get("GALATA_PORT", "8888"))
c.ServerApp.allow_root = True
c.LanguageServerManager.autodetect = False

# The sidebar lists a fresh copy of the fixture runs inside the temporary root_dir: tests may
# delete runs (and upload new ones through the contents API) without touching the checkout.
sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from make_runs import build  # noqa: E402

c.GpuProf.runs_root = str(build(Path(c.ServerApp.root_dir) / "gpuprof-runs"))
# Kernels of the notebook tests save their runs elsewhere, so the run-list tests see only the
# fixtures whatever order the specs run in (the server would otherwise hand kernels its root).
os.environ["JUPYTER_GPUPROF_RUNS"] = str(Path(c.ServerApp.root_dir) / "kernel-runs")
# Editable installs don't copy jupyter-config/ into etc/jupyter: enable the extension here.
c.ServerApp.jpserver_extensions = {"jupyter_gpuprof": True}

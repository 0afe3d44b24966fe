"""Jupyter server settings of the Galata run (``jlpm start``).

Token and XSRF off, port 8888 without retries, a temporary root_dir: galata's defaults.
"""

from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

c = get_config()  # noqa: F821 -- injected by traitlets when it loads this file
configure_jupyter_server(c)

c.ServerApp.ip = "127.0.0.1"
c.ServerApp.allow_root = True
c.LanguageServerManager.autodetect = False
# The sidebar lists the committed fixture runs, whatever the temporary root_dir is.
c.GpuProf.runs_root = str(Path(__file__).parent / "fixtures" / "runs")
# Editable installs don't copy jupyter-config/ into etc/jupyter: enable the extension here.
c.ServerApp.jpserver_extensions = {"jupyter_gpuprof": True}

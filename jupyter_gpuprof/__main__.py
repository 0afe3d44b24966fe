"""`python -m jupyter_gpuprof analyze|run ...`."""

from .cli import main

raise SystemExit(main())

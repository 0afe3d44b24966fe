"""Shared pytest set-up: Jupyter server fixtures, and skipping ``gpu`` tests without CUDA."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    # torch is imported only when a gpu test was collected: most runs never pay for it.
    if gpu_items and not _cuda_available():
        skip = pytest.mark.skip(reason="needs a CUDA GPU; none available")
        for item in gpu_items:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _restore_runs_env():
    """The server extension exports the runs root for its kernels; keep that out of other tests."""
    import os

    saved = os.environ.get("JUPYTER_GPUPROF_RUNS")
    yield
    if saved is None:
        os.environ.pop("JUPYTER_GPUPROF_RUNS", None)
    else:
        os.environ["JUPYTER_GPUPROF_RUNS"] = saved

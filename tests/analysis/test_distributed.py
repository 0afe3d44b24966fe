"""Cross-rank analysis, exact arithmetic on synthetic per-rank traces (tests/ddp_scenarios.py)."""

import pytest
from ddp_scenarios import (
    ALLREDUCE,
    ALLREDUCE_OLD,
    STEPS,
    comm_bound,
    gpu_straggler,
    host_straggler,
    overlapped,
    write_run,
)

from jupyter_gpuprof.analysis.collective_match import COLLECTIVE_COLUMNS
from jupyter_gpuprof.analysis.distributed import (
    IMBALANCE_COLUMNS,
    RANK_COLUMNS,
    RANK_STEP_COLUMNS,
    analyze_ranks,
)
from jupyter_gpuprof.analysis.rank_loading import load_ranks


def dist(folder, workers=1):
    paths = sorted(folder.glob("trace.rank*.json.gz"))
    return analyze_ranks([s for _, s in load_ranks(paths, workers=workers)])


def test_tables_have_their_documented_columns(tmp_path):
    d = dist(write_run(tmp_path, gpu_straggler()))
    assert list(d.ranks.columns) == list(RANK_COLUMNS)
    assert list(d.rank_steps.columns) == list(RANK_STEP_COLUMNS)
    assert list(d.collectives.columns) == list(COLLECTIVE_COLUMNS)
    assert list(d.imbalance.columns) == list(IMBALANCE_COLUMNS)


@pytest.mark.parametrize("nccl", [ALLREDUCE, ALLREDUCE_OLD])
def test_collectives_are_matched_and_split_into_wait_and_transfer(tmp_path, nccl):
    d = dist(write_run(tmp_path, gpu_straggler(nccl)))
    assert d.n_matched == STEPS and d.n_unmatched == 0
    c = d.collectives.set_index(["step", "rank"])
    for step in range(1, STEPS + 1):
        # rank 0 arrives at 4.1 ms, rank 1 at 6.1 ms; both finish at 7.1 ms
        assert c.loc[(step, 0), "wait_us"] == pytest.approx(2000.0)
        assert c.loc[(step, 1), "wait_us"] == pytest.approx(0.0)
        assert c.loc[(step, 0), "transfer_us"] == pytest.approx(1000.0)
        assert c.loc[(step, 1), "transfer_us"] == pytest.approx(1000.0)
        assert c.loc[(step, 0), "last_rank"] == 1 and bool(c.loc[(step, 0), "op_match"])
        assert c.loc[(step, 0), "dur_us"] == pytest.approx(3000.0)
    r = d.ranks.set_index("rank")
    assert r.loc[0, "wait_ms"] == pytest.approx(2.0) and r.loc[1, "wait_ms"] == pytest.approx(0.0)
    assert r.loc[0, "transfer_ms"] == pytest.approx(1.0)
    assert r.loc[1, "last_arrival_pct"] == pytest.approx(100.0)


def test_clock_offsets_are_recovered_from_collective_ends(tmp_path):
    d = dist(write_run(tmp_path, gpu_straggler(), shift_us={1: 777.0}))
    r = d.ranks.set_index("rank")
    assert r.loc[1, "clock_offset_us"] == pytest.approx(777.0)
    assert r.loc[0, "wait_ms"] == pytest.approx(2.0) and r.loc[1, "wait_ms"] == pytest.approx(0.0)


def test_ranks_whose_captures_start_apart_in_the_sequence_are_lined_up(tmp_path):
    d = dist(write_run(tmp_path, gpu_straggler(), shift_us={1: -1234.0}, queued={1: 2}))
    assert d.n_matched == STEPS and d.n_unmatched == 2
    r = d.ranks.set_index("rank")
    assert r.loc[1, "clock_offset_us"] == pytest.approx(-1234.0)
    assert r.loc[0, "wait_ms"] == pytest.approx(2.0) and r.loc[1, "wait_ms"] == pytest.approx(0.0)
    assert d.collectives["step"].tolist() == [s for s in range(1, STEPS + 1) for _ in (0, 1)]


def test_straggler_by_gpu_work(tmp_path):
    d = dist(write_run(tmp_path, gpu_straggler()))
    r = d.ranks.set_index("rank")
    assert r.loc[0, "compute_ms"] == pytest.approx(4.0)
    assert r.loc[1, "compute_ms"] == pytest.approx(6.0)
    assert r.loc[0, "idle_ms"] == pytest.approx(3.0) and r.loc[1, "idle_ms"] == pytest.approx(3.0)
    s = d.slowest()
    assert s["rank"] == 1 and s["phase"] == "gpu_work"
    assert s["extra_ms"] == pytest.approx(2.0)
    assert s["gpu_work_ms"] == pytest.approx(2.0) and s["host_delay_ms"] == pytest.approx(0.0)
    assert s["others_wait_ms"] == pytest.approx(2.0)


def test_straggler_by_host_delay(tmp_path):
    d = dist(write_run(tmp_path, host_straggler()))
    r = d.ranks.set_index("rank")
    assert r.loc[1, "compute_ms"] == pytest.approx(4.0)
    assert r.loc[1, "idle_ms"] == pytest.approx(5.0) and r.loc[0, "idle_ms"] == pytest.approx(3.0)
    assert r.loc[1, "input_ms"] == pytest.approx(2.0) and r.loc[0, "input_ms"] == 0.0
    s = d.slowest()
    assert s["rank"] == 1 and s["phase"] == "host_delay"
    assert s["extra_ms"] == pytest.approx(2.0) and s["host_delay_ms"] == pytest.approx(2.0)
    assert s["gpu_work_ms"] == pytest.approx(0.0) and s["input_ms"] == pytest.approx(2.0)


def test_exposed_vs_hidden_comm(tmp_path):
    d = dist(write_run(tmp_path, overlapped()))
    r = d.ranks.set_index("rank")
    for rank in (0, 1):
        # all-reduce [3.0, 4.6] ms under a GEMM [0.1, 4.1] ms: 1.1 hidden, 0.5 exposed
        assert r.loc[rank, "comm_ms"] == pytest.approx(1.6)
        assert r.loc[rank, "hidden_comm_ms"] == pytest.approx(1.1)
        assert r.loc[rank, "exposed_comm_ms"] == pytest.approx(0.5)
        assert r.loc[rank, "wait_ms"] == pytest.approx(0.0)
        assert r.loc[rank, "exposed_transfer_ms"] == pytest.approx(0.5)
        assert r.loc[rank, "comm_pct_of_step"] == pytest.approx(16.0)
    assert d.slowest()["extra_ms"] == pytest.approx(0.0)


def test_waiting_is_not_exposed_transfer(tmp_path):
    d = dist(write_run(tmp_path, gpu_straggler()))
    r = d.ranks.set_index("rank")
    # rank 0's 3 ms all-reduce runs alone (exposed) but 2 ms of it is waiting for rank 1
    assert r.loc[0, "exposed_comm_ms"] == pytest.approx(3.0)
    assert r.loc[0, "exposed_transfer_ms"] == pytest.approx(1.0)


def test_comm_bound_ranks(tmp_path):
    d = dist(write_run(tmp_path, comm_bound()))
    r = d.ranks.set_index("rank")
    assert r.loc[0, "exposed_transfer_ms"] == pytest.approx(6.0)
    assert r.loc[0, "comm_pct_of_step"] == pytest.approx(100 * 6.0 / 7.15)


def test_process_pool_returns_the_same_summaries(tmp_path):
    folder = write_run(tmp_path, host_straggler())
    serial, pooled = dist(folder, workers=1), dist(folder, workers=2)
    assert serial.ranks.equals(pooled.ranks)
    assert serial.collectives.equals(pooled.collectives)

"""The observer check's noise study: A/A comparisons of blocks of one kind, and whole epochs cut
at their stalls, never joined across a block's edge."""

from __future__ import annotations

import math

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def noise():
    return load_benchmark("corpus/observer_noise")


def test_an_aa_comparison_reads_blocks_of_one_kind_two_apart(noise):
    blocks = [("off", [1.0, 1.0, 1.0]), ("on", [9.0, 9.0, 9.0]), ("off", [2.0, 2.0, 2.0]),
              ("on", [9.0, 9.0]), ("off", [4.0, 4.0, 4.0])]
    # off/off twice (x2 each); on/on has a block with too few values; never on against off
    assert noise.aa_logs(blocks, noise.STATS["median"]) == pytest.approx([math.log(2)] * 2)


def test_whole_epochs_are_cut_at_stalls_inside_one_block(noise):
    step, stall = [10.0, 30.0] * 3, [150.0]
    blocks = [("off", [10.0] + stall + step + stall + step + stall + [10.0]),
              ("on", step + stall + step[:2]), ("off", stall + step + stall + step)]
    got = noise.epochs(blocks)
    # the block's values before its first stall and after its last are no whole epoch, and an
    # epoch begun in one block is not finished in the next
    assert got == [[stall + step, stall + step], [], [stall + step]]
    n, sd = noise.epoch_sd(blocks + blocks)
    assert n == 2 and sd == pytest.approx(0.0)  # pairs in one block only


@pytest.mark.parametrize("align", ["", "epoch"])
def test_the_check_reads_a_block_by_the_statistic_with_the_least_aa_spread(noise, align):
    """On the committed blocks, the statistic the check reads a block of each alignment by
    (observer_inprocess.BLOCK_STAT) has the least A/A spread of those tried over the runs of
    that alignment (docs/benchmarks.md §21, session 50: a time block's median; session 52: a
    block of whole epochs' mean, whose median, mostly of a steady epoch's values, spreads 0.44
    there and had tipped the time blocks' choice when every run voted on it)."""
    import json

    runs = json.loads(noise.EVIDENCE.read_text())["runs"]
    assert {r.get("align", "") for r in runs} == {"", "epoch"}
    spread = noise.spreads(runs, align)
    least = min(spread, key=spread.get)
    chosen = load_benchmark("corpus/observer_inprocess").BLOCK_STAT[align]
    assert chosen is noise.STATS[least], spread


def test_joined_blocks_hold_both_kinds_alike_and_are_compared_in_pairs(noise):
    """Blocks joined two at a time: each joined block holds one `off` and one `on`, and
    consecutive joined blocks are compared, an A/A comparison however big the on/off step."""
    pace = [10.0, 20.0, 10.0, 40.0, 10.0, 20.0]  # the loop's slow pace, two blocks at a level
    blocks = [(state, [pace[i // 2] * (3.0 if state == "on" else 1.0)] * 3)
              for i, state in enumerate(["off", "on"] * 6)]
    n, sd = noise.joined_sd(blocks, 2)
    # joined medians: the on/off step (x3) is inside every joined block, so only the pace's
    # ratios are read: 20/10, 40/10, 20/10
    assert n == 3
    assert sd == pytest.approx(math.sqrt(((math.log(4) - math.log(2)) ** 2) / 3), rel=1e-9)
    with pytest.raises(ValueError, match="even number"):
        noise.joined_sd(blocks, 3)


def test_the_seconds_a_bar_needs_grow_with_the_spread_squared(noise):
    # σ 0.0153 puts 1.96σ/0.03 at 1: one round of two 1 s blocks
    assert noise.seconds_for_bar(0.03 / 1.96, 1.0) == pytest.approx(2.0)
    assert noise.seconds_for_bar(2 * 0.03 / 1.96, 1.0) == pytest.approx(8.0)


def test_an_on_block_read_against_both_sides_takes_a_steady_drift_out(noise):
    """A pace that slows by 1 % a block and a tool that costs nothing: the round as made reads
    the drift as a 1 % cost, the round against both sides reads none."""
    blocks = [("off" if i % 2 == 0 else "on", [10.0 * 1.01 ** i] * 3) for i in range(9)]
    meds = noise.medians(blocks)
    assert noise.pair_logs(blocks) == pytest.approx([math.log(1.01)] * 4)
    assert noise.both_sides_logs(meds) == pytest.approx([0.0] * 4, abs=1e-12)


def test_the_standard_error_counts_neighbours_that_share_a_block(noise):
    # alternating series: neighbours covary negatively, the mean is steadier than iid reads
    x = [1.0, -1.0] * 50
    iid = 1.0 / math.sqrt(len(x))  # population σ 1 over √n, as lag 0 alone gives
    assert noise.newey_west_se(x, lags=0) == pytest.approx(iid)
    assert noise.newey_west_se(x, lags=1) == pytest.approx(0.1 * iid, rel=0.01)

"""One rank's reduction: which kernels are collectives, and which collective each runs."""

import pytest
from ddp_scenarios import ALLREDUCE, ALLREDUCE_OLD

from jupyter_gpuprof.analysis.rank_summary import collective_op, is_collective


@pytest.mark.parametrize("name", [ALLREDUCE, ALLREDUCE_OLD,
                                  "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage)"])
def test_both_nccl_kernel_namings_are_collectives(name):
    assert is_collective(name)
    assert collective_op(name) in ("AllReduce", "Broadcast")
    assert not is_collective("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")

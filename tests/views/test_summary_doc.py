"""The views' typed reading of the summary JSON (`views.summary_doc`) names only model fields."""

import typing

import msgspec
import pytest

from jupyter_gpuprof.report import model, model_cost, model_memory, model_ranks, timeline_model
from jupyter_gpuprof.views import memory_doc, summary_doc

DOC_MODULES = (summary_doc, memory_doc)

#: each TypedDict of the views and the model block it reads (report/model*.py)
PAIRS = {
    "SourceDoc": model.Source, "StepStatsDoc": model.StepStats, "SpikesDoc": model.Spikes,
    "CaptureCostDoc": model.CaptureCost,
    "StepsDoc": model.Steps, "GpuDoc": model.Gpu, "VerdictDoc": model.Verdict,
    "WhereDoc": model.Where, "FindingDoc": model.Finding, "OpDoc": model.OpRow,
    "KernelDoc": model.KernelRow, "KernelKindDoc": model.KernelKindRow,
    "KernelTableDoc": model.KernelTable,
    "TransferDoc": model.TransferRow, "SyncCallerDoc": model.SyncCaller,
    "SyncsDoc": model.Syncs, "FlopsDoc": model.Flops, "MemoryDoc": model.Memory,
    "InputDoc": model.Input, "BasisDoc": model.Basis, "RankDoc": model_ranks.DistributedRank,
    "DistributedDoc": model_ranks.Distributed, "LaneDoc": timeline_model.Lane,
    "GapsDoc": timeline_model.TimelineGaps, "StepMarkDoc": timeline_model.TimelineStep,
    "TimelineDoc": timeline_model.Timeline, "CostDoc": model_cost.Cost,
    "SpreadDoc": model_cost.Spread, "ConditionsDoc": model_cost.Conditions,
    "StepChangeDoc": model_cost.StepChange, "TryDoc": model_cost.TryResult,
    "OneTimeDoc": model_cost.OneTimeCost, "CalibrationDoc": model_cost.CalibrationRow,
    "StackDoc": model_cost.StackResult, "TryMemoryDoc": model_cost.TryMemory,
    "MemoryKindDoc": model_memory.MemoryKind, "MemoryHolderDoc": model_memory.MemoryHolder,
    "MemoryFixDoc": model_memory.MemoryFix, "MemoryOverStepDoc": model_memory.MemoryOverStep,
    "MemoryPhaseDoc": model_memory.MemoryPhase,
    "OomAllocationDoc": model_memory.OomAllocation, "OomDoc": model_memory.OomPostMortem,
    "SummaryDoc": model.Summary,
}


def test_every_typed_dict_of_the_views_is_paired_with_a_model_block():
    docs = {n for module in DOC_MODULES for n, v in vars(module).items()
            if isinstance(v, type) and typing.is_typeddict(v)}
    assert docs == set(PAIRS)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_each_key_the_views_read_is_a_field_of_the_model(name):
    doc = next(getattr(m, name) for m in DOC_MODULES if hasattr(m, name))
    block = PAIRS[name]
    fields = set(block.__struct_fields__)
    assert set(doc.__annotations__) <= fields, set(doc.__annotations__) - fields
    assert set(typing.get_type_hints(doc)) <= fields


def test_an_encoded_summary_holds_every_key_the_views_read():
    from paths import ROOT

    s = msgspec.json.decode(
        (ROOT / "tests" / "data" / "expected" / "compute.summary.json").read_bytes())
    for key, hint in typing.get_type_hints(summary_doc.SummaryDoc).items():
        assert key in s, key
        if typing.is_typeddict(hint):
            assert set(hint.__required_keys__) <= set(s[key]), key

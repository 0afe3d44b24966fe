"""The shape of a saved allocator history (`torch.cuda.memory._snapshot()` plus our additions)."""

from __future__ import annotations

from typing import TypedDict


class Frame(TypedDict, total=False):
    """One Python frame of an allocation's stack."""

    name: str
    filename: str
    line: int


class Block(TypedDict, total=False):
    """A block of a segment: `active_allocated` or `inactive` (free)."""

    address: int
    size: int
    state: str
    frames: list[Frame]


class Segment(TypedDict, total=False):
    """A cudaMalloc'd segment and its blocks."""

    device: int
    total_size: int
    is_expandable: bool
    blocks: list[Block]


class AllocatorEvent(TypedDict, total=False):
    """One recorded allocator event (`alloc`, `free_completed`, `segment_alloc`, `oom`…)."""

    action: str
    addr: int
    size: int
    time_us: int
    frames: list[Frame]


class Annotation(TypedDict, total=False):
    """A record_function range's START or END (`external_annotations`)."""

    stage: str
    name: str
    device: int
    time_us: int


class OomInfo(TypedDict, total=False):
    """The failed request and the error's text, when the capture ended out of memory."""

    requested: int | None
    error: str


class SavedRecord(TypedDict):
    """A tensor an autograd node saved for backward (`capture/autograd_graph.py`)."""

    storage: int  # storage identity (data pointer), shared by views
    storage_bytes: int
    view_elems: int  # elements of the saved view
    floating: bool
    element_size: int
    producer: int | None  # id of the node that produced it (None: a leaf or no grad)
    parameter: bool  # a leaf that requires grad (a weight)
    output: bool  # the node's own result


class GraphRecord(TypedDict):
    """An autograd node of one recorded step: its op, its inputs' producers, what it saved."""

    id: int
    op: str  # the node's class name, e.g. 'AddmmBackward0'
    inputs: list[int | None]
    saved: list[SavedRecord]


class CaptureAdditions(TypedDict, total=False):
    """What the capture adds (`MEMORY_HISTORY_KEY`): addresses of the model's tensors by kind
    ([address, bytes] pairs), the parameters' element size, the OOM, the history's bound, one
    recorded step's autograd graph with what each node saved."""

    max_entries: int
    addresses: dict[str, list[tuple[int, int]]]
    param_element_size: int | None
    oom: OomInfo
    graph: list[GraphRecord]


class Snapshot(TypedDict, total=False):
    """A saved allocator history."""

    segments: list[Segment]
    device_traces: list[list[AllocatorEvent]]
    external_annotations: list[Annotation]
    jupyter_gpuprof: CaptureAdditions

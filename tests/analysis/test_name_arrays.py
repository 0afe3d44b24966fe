"""The array forms of per-name rules (kernel short names and kinds, rules per used name, the
grouping on codes, the op links' order) give what the item-by-item rule gives, on random and
hostile names: trailing NULs, unicode and its whitespace, very long and empty names."""

import random
import re

import numpy as np
import pandas as pd
import pytest
from tracebuilder import TraceBuilder

from jupyter_gpuprof.advice.patterns import _any_starts
from jupyter_gpuprof.analysis import name_masks
from jupyter_gpuprof.analysis.event_columns import _decoded
from jupyter_gpuprof.analysis.grouping import group_codes, most_common_rows
from jupyter_gpuprof.analysis.kernels import (
    kernel_kinds,
    kernel_rows,
    kind_of,
    mask_digits,
    short_kernel_name,
    short_kernel_names,
    uses_tensor_cores,
)
from jupyter_gpuprof.analysis.name_masks import (
    containing,
    hits_in_order,
    matching,
    names_in,
    names_matching,
    names_where,
    per_name,
)
from jupyter_gpuprof.analysis.op_links import op_kernels, op_shapes, text_rank
from jupyter_gpuprof.analysis.ops import autograd_node, autograd_nodes, op_table
from jupyter_gpuprof.analysis.piece_columns import compact
from jupyter_gpuprof.analysis.timeline_detail import _phase_of_range, _phases_of_ranges
from jupyter_gpuprof.analysis.trace import load_trace

PIECES = ["void ", "at::native::", "(anonymous namespace)::", "<", ">", "(", ")", "::", ":",
          "Kernel2", "kernel", "elementwise_kernel", "CUDAFunctor_add", "cutlass_80_simt_x",
          "gemm", "flash", "nccl", "conv", "convert", "triton_poi_fused_", "norm", "sm90_xmma",
          "12", "0", "7", ", ", " ", "  ", "\t", "\u3000", "\x85", "\x1c", "\u2028", "é", "日本",
          "🚀", "\x00", "Memcpy HtoD", "Pageable", "DtoH", "aten::mm", "fp16", "_", "x"]


def hostile_names(n: int, seed: int) -> list[str]:
    """Names made of kernel-name parts and hostile characters, some with trailing NULs or
    spaces, a few very long, the empty name, and duplicates."""
    rng = random.Random(seed)
    names = ["", " ", "\x00", "void ", "void", "Kernel2", "kernel<x>", "a" * 20_000 + "<b>"]
    for _ in range(n):
        name = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.1:
            name += "\x00" * rng.randint(1, 3)
        if rng.random() < 0.05:
            name = name * rng.randint(50, 400)
        names.append(name)
    return names + names[: n // 10]  # repeated names


NAMES = hostile_names(4000, 25)


def test_short_kernel_names_are_the_rule_name_by_name(chunk_chars):
    got = short_kernel_names(np.array(NAMES, dtype=object))
    assert got.dtype == object
    assert list(got) == [short_kernel_name(n) for n in NAMES]
    # the shortcut (a name the rule leaves alone is its own short name) is taken, and right
    assert any(n == short_kernel_name(n) for n in NAMES)
    assert any(n != short_kernel_name(n) for n in NAMES)


def test_kernel_kinds_are_kind_of_name_by_name():
    kinds = list(kernel_kinds(np.array(NAMES, dtype=object)))
    assert kinds == [kind_of(n) for n in NAMES]
    assert {"attention", "nccl", "conv", "gemm", "other"} <= set(kinds)


def _categorical_slice(names: list[str], seed: int) -> pd.DataFrame:
    """A slice of an event table: a name column whose categories hold names the slice does
    not use, and some missing names."""
    rng = np.random.default_rng(seed)
    categories = pd.unique(pd.Series(list(names) + NAMES + ["unused one", "unused two"],
                                     dtype=object))
    picks = rng.choice(len(names), size=3000)
    values = np.array(names, dtype=object)[picks]
    values[rng.random(len(values)) < 0.05] = None
    return pd.DataFrame({"name": pd.Categorical(values, categories=categories)})


def test_a_rule_per_used_name_is_the_rule_row_by_row():
    df = _categorical_slice(NAMES[:500], 1)
    texts = df["name"].astype(object).to_numpy()
    got = per_name(df, lambda names: np.array([len(n) for n in names]), -1, np.int64)
    assert list(got) == [len(n) if isinstance(n, str) else -1 for n in texts]
    mask = names_where(df, lambda n: "\x00" in n or n.endswith(" "))
    assert list(mask) == [isinstance(n, str) and ("\x00" in n or n.endswith(" "))
                          for n in texts]
    assert mask.any() and not mask.all()


def test_groups_are_numbered_as_pandas_groups_them():
    rng = np.random.default_rng(2)
    df = _categorical_slice(NAMES[:300], 3)
    df["dims"] = pd.Categorical(rng.choice(["[1]", "[2]", "", None], size=len(df)))
    for keys in (["name"], ["name", "dims"]):
        want = df.groupby(keys, sort=False, observed=True, dropna=True).ngroup()
        want = want.fillna(-1).to_numpy(dtype=np.int64)
        assert list(group_codes(df, keys)) == list(want)


def test_the_most_common_value_is_pandas_mode_with_ties_to_the_first_seen():
    rng = np.random.default_rng(4)
    df = _categorical_slice(NAMES[:200], 5)
    df["v"] = pd.Categorical(rng.choice(["a\x00", "b", "é", "", None], size=len(df)))
    group = group_codes(df, ["name"])
    n = int(group.max()) + 1
    best = most_common_rows(group, df["v"], n)
    # the item rule: each group's value counts, the highest count first seen
    first_names = df["name"].to_numpy(dtype=object)[[np.flatnonzero(group == g)[0]
                                                      for g in range(n)]]
    for g, name in enumerate(first_names):
        values = [v for v in df["v"].to_numpy(dtype=object)[group == g] if isinstance(v, str)]
        if not values:
            assert best[g] == -1
            continue
        counts = pd.Series(values).value_counts(sort=False)  # in order of appearance
        top = counts.index[int(np.argmax(counts.to_numpy()))]
        assert df["v"].iloc[best[g]] == top and df["name"].iloc[best[g]] == name


def _calls(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3000
    names = np.array(NAMES[:400], dtype=object)[rng.integers(0, 400, n)]
    return pd.DataFrame({
        "name": pd.Categorical(names), "external_id": np.arange(n),
        "input_dims": pd.Categorical(rng.choice(["[[1]]", "[[2]]", ""], size=n)),
        "input_types": pd.Categorical(rng.choice(['["float"]', '["c10::Half"]'], size=n)),
        "autograd": rng.choice(["", "MmBackward0", "AddBackward0"], size=n).astype(object),
        "wrapper": rng.random(n) < 0.05,
        "dur_us": rng.integers(1, 50, n).astype(float),
        "cpu_self_us": rng.integers(0, 9, n).astype(float),
        "cuda_self_us": rng.integers(0, 3, n).astype(float),
        "cuda_total_us": rng.integers(0, 6, n).astype(float),
    })


@pytest.mark.parametrize("by_shape", [False, True])
def test_the_op_table_is_the_pandas_grouping_of_its_calls(by_shape):
    calls = _calls(6)
    got = op_table(calls, by_shape)
    rows = calls[~calls["wrapper"]]
    keys = ["name", "input_dims"] if by_shape else ["name"]
    g = rows.groupby(keys, sort=False, observed=True)
    want = g.agg(calls=("dur_us", "size"), cpu_total_us=("dur_us", "sum"),
                 cpu_self_us=("cpu_self_us", "sum"), cuda_total_us=("cuda_total_us", "sum"),
                 cuda_self_us=("cuda_self_us", "sum")).reset_index()
    assert list(got["name"]) == list(want.sort_values(
        ["cuda_self_us", "cpu_self_us"], ascending=False, ignore_index=True)["name"])
    by_key = got.set_index(keys)
    for _, row in want.iterrows():
        key = tuple(row[k] for k in keys) if by_shape else row["name"]
        mine = by_key.loc[key]
        assert mine["calls"] == row["calls"] and mine["cuda_self_us"] == row["cuda_self_us"]
        members = rows[(rows[keys] == pd.Series({k: row[k] for k in keys})).all(axis=1)]
        types = members["input_types"].astype(str)
        counts = types.value_counts(sort=False)
        assert mine["input_types"] == counts.index[int(np.argmax(counts.to_numpy()))]


def test_op_links_are_ordered_by_op_text_as_sorting_the_texts_orders_them():
    calls = _calls(7)
    rng = np.random.default_rng(8)
    kernels = pd.DataFrame({
        "name": pd.Categorical(np.array(NAMES, dtype=object)[rng.integers(0, 800, 5000)]),
        "external_id": rng.integers(-1, len(calls), 5000),
        "dur_us": rng.integers(1, 4, 5000).astype(float)})
    links = op_kernels(calls, kernels)
    want = links.sort_values(["op", "total_us"], ascending=[True, False], ignore_index=True)
    pd.testing.assert_frame_equal(links, want)
    assert list(links["short_name"]) == [short_kernel_name(k) for k in links["kernel"]]
    assert any("\x00" in op for op in links["op"])  # hostile op names went through
    shapes = op_shapes(calls)
    pd.testing.assert_frame_equal(shapes, shapes.sort_values(
        ["op", "calls", "cuda_self_us"], ascending=[True, False, False], ignore_index=True))


def test_kernel_rows_kind_and_tensor_cores_are_the_rules_row_by_row(tmp_path):
    """`kernel_rows` takes kinds once per used name and tests Tensor Cores on matmul-like
    kinds alone: each row is what `kind_of` and `uses_tensor_cores` say of it."""
    rng = random.Random(9)
    b = TraceBuilder()
    extra = ["flash_fwd_kernel", "sm90_xmma_gemm_bf16", "ampere_sgemm_128x64_nn",
             "cutlass_80_tensorop_f16_s16816gemm", "implicit_gemm_conv"]
    for i, name in enumerate(NAMES[:600] + extra * 20):
        types = rng.choice([['"float"'], ['"c10::BFloat16"'], ['"c10::Half"'], None])
        ext = b.op("aten::mm", i * 20.0, 10.0, types=types)
        b.kernel(name, i * 20.0 + 1, i * 20.0 + 5, 3.0, ext=ext)
    trace = load_trace(b.write(tmp_path / "t.json"))
    rows = kernel_rows(trace)
    assert len(rows) == 700
    texts = rows["name"].astype(object).to_numpy()
    cats = rows["cat"].astype(str)
    assert list(rows["kind"]) == [kind_of(n, c) for n, c in zip(texts, cats, strict=True)]
    want = [uses_tensor_cores(n, k, d)
            for n, k, d in zip(texts, rows["kind"], rows["dtype"], strict=True)]
    assert list(rows["tensor_core"]) == want and any(want) and not all(want)


def test_text_ranks_order_as_sorting_the_texts_and_tie_equal_texts():
    texts = np.array(NAMES, dtype=object)  # with repeated names
    rank = text_rank(texts)
    assert list(texts[np.argsort(rank, kind="stable")]) == sorted(NAMES)
    for i, j in [(0, len(NAMES) - 1), (5, 9), (17, 4008 + 17), (20, 4008 + 20)]:
        assert (rank[i] == rank[j]) == (texts[i] == texts[j])
        assert (rank[i] < rank[j]) == (texts[i] < texts[j])
    assert len(text_rank(np.array([], dtype=object))) == 0


@pytest.mark.parametrize("needle", ["Kernel", "\x00", ":", "void ", "日本", "\n", "x\nvo", "",
                                    "HtoD", "no such text"])
def test_a_needle_tests_only_names_containing_it_and_finds_them_all(needle, chunk_chars):
    names = np.array(NAMES + ["a\nb", "\n", "Kernel\n\nKernel"], dtype=object)
    assert list(containing(names, needle)) == [i for i, n in enumerate(names) if needle in n]
    df = _categorical_slice(list(names), 11)
    texts = df["name"].astype(object).to_numpy()

    def rule(n: str) -> bool:
        return n.startswith(needle) or n.endswith(needle + "\x00")

    want = [isinstance(n, str) and rule(n) for n in texts]
    assert list(names_where(df, rule, needle)) == want == list(names_where(df, rule))


def test_names_in_a_set_are_the_membership_rule_row_by_row():
    df = _categorical_slice(NAMES[:300], 12)
    chosen = frozenset(NAMES[:40:3]) | {"not in the trace"}
    texts = df["name"].astype(object).to_numpy()
    got = names_in(df, chosen)
    assert list(got) == [isinstance(n, str) and n in chosen for n in texts] and got.any()


def test_phases_of_host_ranges_are_the_rule_name_by_name():
    words = ["forward", "FORWARD", "Backward", "data", "DATA", "optimizer", "İ", "ẞ",
             "Optimizer.step#SGD.step", "Optimizer.zero_grad#x", "Optimizer.other",
             "autograd::engine::evaluate_function: MmBackward0", "enumerate(DataLoader)#_"
             "SingleProcessDataLoaderIter.__next__", "__next__", "DataLoader", "other"]
    names = np.array(NAMES + words + [w + "\x00" for w in words], dtype=object)
    got = _phases_of_ranges(names)
    assert list(got) == [_phase_of_range(n) for n in names]
    assert set(got) == {-1, 0, 1, 2, 3}


ASCII = [n for n in NAMES if n.isascii()] + ["12", "a1b22c333", "9", "x0", "0\x00", ""]


@pytest.fixture(params=[1 << 21, 64], ids=["one-run", "runs-of-64-chars"])
def chunk_chars(request, monkeypatch):
    """Names joined in one run, and in many short runs (names longer than a run alone)."""
    monkeypatch.setattr(name_masks, "CHUNK_CHARS", request.param)
    return request.param


@pytest.mark.parametrize("names", [ASCII, NAMES, NAMES + ["a\n1", "\n"], ["٣٤ and 12"]])
def test_masked_digits_are_the_rule_name_by_name(names, chunk_chars):
    # ASCII names take the numpy path, the others the joined substitution, a newline the rule
    got = mask_digits(np.array(names, dtype=object))
    assert got == [re.sub(r"\d+", "0", n) for n in names]
    assert mask_digits(np.array([], dtype=object)) == []


PATTERNS = [re.compile("nccl", re.IGNORECASE), re.compile("autograd::engine|Backward"),
            re.compile("DataLoader|pin_memory|__next__"), re.compile(r"\d+\x00"),
            re.compile("é|日本"), re.compile("mm|x_")]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pattern_found_in_the_joined_names_is_the_search_name_by_name(pattern, chunk_chars):
    names = np.array(NAMES + ["NcCl", "a\nnccl", "Kernel2\nBackward", "nc\ncl", "x\n_",
                              "enumerate(DataLoader)#", "Data\nLoader", "pin_memory\x00"],
                     dtype=object)
    want = [i for i, n in enumerate(names) if pattern.search(n)]
    assert list(matching(names, pattern)) == want and want
    df = _categorical_slice(list(names), 13)
    texts = df["name"].astype(object).to_numpy()
    assert list(names_matching(df, pattern)) == [
        isinstance(n, str) and pattern.search(n) is not None for n in texts]


def test_several_needles_find_the_names_holding_any_of_them(chunk_chars):
    names = np.array(NAMES + ["a\nb", "Kernel\n\nKernel"], dtype=object)
    needles = ("Kernel", "\x00", "日本", "no such text", "\n")
    want = [i for i, n in enumerate(names) if any(s in n for s in needles)]
    assert list(containing(names, needles)) == want
    assert list(containing(names, ())) == []
    assert list(hits_in_order(6, np.array([4, 1]), np.array([1, 0]))) == [0, 1, 4]


def test_autograd_nodes_are_the_rule_name_by_name():
    words = ["autograd::engine::evaluate_function: MmBackward0", "MmBackward0", "Backward",
             "torch::autograd::AccumulateGrad", "torch::autograd::CopySlices", "xBackward1y",
             "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "a:b"]
    names = np.array(NAMES + words + [w + "\x00" for w in words], dtype=object)
    got = autograd_nodes(names)
    assert list(got) == [autograd_node(n) for n in names]
    assert {"MmBackward0", "torch::autograd::AccumulateGrad"} <= set(got)


@pytest.mark.parametrize("sep", ["\x00", b"\x00"])
def test_compacted_values_are_equal_copies(sep):
    values = NAMES[:300] if isinstance(sep, str) else [n.encode() for n in NAMES[:300]]
    got = compact(list(values), sep)
    assert got == list(values)
    clean = [v for v in values if sep not in v]
    assert compact(list(clean), sep) == clean
    assert compact([], sep) == [] and compact(clean[:1], sep) == clean[:1]


def test_ops_in_use_are_found_by_their_prefixes():
    names = np.array(NAMES + ["x aten::scaled_dot_product", "aten::scaled_dot_productx"],
                     dtype=object)
    prefixes = ("aten::_scaled_dot_product", "aten::scaled_dot_product")
    assert _any_starts(names, prefixes)
    assert not _any_starts(names[:-1], prefixes)
    assert _any_starts(names[:-1], ("Kernel",)) == any(n.startswith("Kernel") for n in names)


def test_names_joined_for_one_table_are_not_used_for_another():
    # the joined names are kept per categories: a slice of another table is searched anew
    one = _categorical_slice(NAMES[:200], 21)
    other = pd.DataFrame({"name": pd.Categorical(["zz Kernel", "Kernel", "x"] * 3)})
    for df in (one, other, one, other):
        texts = df["name"].astype(object).to_numpy()
        want = [isinstance(n, str) and n.startswith("Kernel") for n in texts]
        assert list(names_where(df, lambda n: n.startswith("Kernel"), "Kernel")) == want


def test_json_texts_decoded_together_are_decoded_one_by_one():
    raws = [n.encode() for n in NAMES[:400] if "\x00" not in n] + [b"", b"[1, 2]", "é".encode()]
    assert _decoded(raws, bytes.decode) == [r.decode() for r in raws]
    with_nul = [*raws, b"a\x00b"]
    assert _decoded(with_nul, bytes.decode) == [r.decode() for r in with_nul]
    with pytest.raises(UnicodeDecodeError):
        _decoded([*raws, b"\xc3", b"\xa9"], bytes.decode)  # split across two: not one text
    assert _decoded(raws, lambda r: r.hex()) == [r.hex() for r in raws]

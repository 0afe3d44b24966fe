"""Kernel table: GPU activity by kernel, with its kind and whether it runs on Tensor Cores."""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pandas as pd

from .kineto_json import GPU_CATEGORIES
from .name_masks import containing, hits_in_order, name_chunks, per_name
from .trace import Trace

KERNEL_COLUMNS = {
    "name": "kernel name (memcpy/memset rows keep their activity name)",
    "kind": "gemm | conv | attention | norm | softmax | reduction | elementwise | nccl | memcpy "
            "| memset | other",
    "tensor_core": "runs on Tensor Cores (from the kernel name, and the launching op's dtype)",
    "dtype": "dtype of the launching op's first floating input (fp32, bf16, fp16, …; '' unknown)",
    "calls": "launches in the window", "total_us": "summed duration",
    "mean_us": "mean duration", "median_us": "median duration",
    "pct_of_gpu": "share of all GPU activity time in the window",
    "short_name": "the kernel's own name: no return type, namespaces or template arguments",
    "tensor_core_eligible": "a matmul-like kind (gemm, conv, attention) that Tensor Cores can run",
    "grid": "most common launch grid (\"65536×1×1\"; '' for copies and traces without it)",
    "block": "most common thread block (\"128×1×1\"; '' likewise)",
    "occupancy_pct": "CUPTI's estimated achieved occupancy, mean over launches (NaN: not recorded)",
}
# ordered: the first matching pattern decides the kind
KIND_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("nccl", re.compile(r"nccl", re.I)),
    ("attention", re.compile(r"flash|fmha|attention|sdpa|_mha|mha_", re.I)),
    ("conv", re.compile(r"conv(?!ert)|fprop|dgrad|wgrad|implicit_gemm|winograd", re.I)),
    # Cijk_…: rocBLAS/hipBLASLt (Tensile) GEMMs
    ("gemm", re.compile(r"gemm|gemv|nvjet|xmma|cutlass|matmul|wgmma|splitk|cublas|triton_tem|"
                        r"^Cijk_", re.I)),
    ("norm", re.compile(r"norm|GammaBeta", re.I)),
    ("softmax", re.compile(r"softmax", re.I)),
    ("reduction", re.compile(r"reduce|reduction|triton_red|triton_per|sum_kernel|argmax|"
                             r"cross_entropy|nll_loss", re.I)),
    ("elementwise", re.compile(r"elementwise|pointwise|triton_poi|multi_tensor_apply|fill|copy|"
                               r"index|gather|scatter|embedding|cat_|unroll|vectorized", re.I)),
]
MATMUL_KINDS = ("gemm", "conv", "attention")
TENSOR_CORE_NAME = re.compile(
    r"tf32|bf16|f16|fp16|h16|hmma|gmma|tensorop|s16816|s1688|16816|nvjet|e4m3|e5m2|fp8|"
    r"_i8|imma|flash|sm90_xmma|"
    r"_MI\d+x\d+x\d+", re.I)  # _MI16x16x1: the AMD matrix-core (MFMA) instruction a GEMM uses
SIMT_NAME = re.compile(r"simt|sgemm|dgemm|f32f32_f32f32|ffma|gemv", re.I)
DTYPE_NAMES = {
    "float": "fp32", "double": "fp64", "c10::BFloat16": "bf16", "c10::Half": "fp16",
    "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8",
}


_DIGITS = re.compile(r"\d+")


#: wrapper kernels whose own name says little: their short name adds what they run
GENERIC_KERNEL = re.compile(r"^(Kernel\d*|kernel|device_kernel|\w*elementwise_kernel\w*)$")
#: what a wrapper runs, in its template arguments: a functor, a CUDA kernel body, a CUTLASS op
WRAPPED = re.compile(r"\w*Functor\w*|\w+_kernel_cuda|cutlass_\w+|\w+_kernel_impl(?!_nocast)\w*")


#: what the names of the kernels Inductor generates start with (Triton): already fused
COMPILER_KERNEL_PREFIX = "triton_"


def compiler_generated(names: pd.Series) -> np.ndarray:
    """Per kernel name, whether `torch.compile` generated it: fused as far as it fuses."""
    return names.astype(str).str.startswith(COMPILER_KERNEL_PREFIX).to_numpy(dtype=bool)


def short_kernel_name(name: str) -> str:
    """A kernel's own name, for a table cell: `void at::native::foo<float, 4>(int)` -> `foo`;
    a wrapper names what it runs (`Kernel2<cutlass_80_simt_sgemm_…>`, `elementwise_kernel<
    CUDAFunctor_add>`). The full template name stays in the row for hover and expand."""
    text = str(name).removeprefix("void ").replace("(anonymous namespace)::", "").strip()
    cut = min((i for i in (text.find("<"), text.find("(")) if i > 0), default=len(text))
    own = text[:cut].strip().rsplit("::", 1)[-1] or text
    if GENERIC_KERNEL.match(own) and (inner := WRAPPED.search(text[cut:])):
        return f"{own}<{inner.group(0)}>"
    return own


#: what `short_kernel_name` cuts: a template or argument list, a namespace, `void `, space
#: around the name; a name with none of them is its own short name
_CUT = re.compile(r"[<(:]")


def short_kernel_names(names: np.ndarray | pd.Series) -> np.ndarray:
    """`short_kernel_name` of each name (object strings), the rule run only on the names it
    would change: generated kernels (666 k distinct Triton names) are mostly plain words."""
    out = np.array(names, dtype=object)
    try:  # the tests in C over all names; the texts to cut found by scans of the names joined
        spaced = np.array(list(map(str.strip, out)), dtype=object) != out
    except TypeError:  # a name that is not text
        todo: Any = [i for i, n in enumerate(out) if not isinstance(n, str) or _CUT.search(n)
                     or n.startswith("void ") or n != n.strip()]
    else:
        todo = hits_in_order(len(out), np.flatnonzero(spaced),
                             containing(out, ("<", "(", ":", "void ")))
    out[todo] = [short_kernel_name(n) for n in out[todo]]
    return out


def mask_digits(names: np.ndarray) -> list[str]:
    """Each name with its numbers masked (`_DIGITS` -> "0") over the names joined by a newline
    (no digit run crosses one): ASCII text as bytes in numpy (each digit "0", the digits after
    a digit dropped; the regular expression took 0.4 s on 333 k names), else one substitution;
    name by name where a name holds a newline."""
    out: list[str] = []
    try:
        for start, joined, ends in name_chunks(names):
            if joined.count("\n") != len(ends) - 1:
                out += [_DIGITS.sub("0", n) for n in names[start:start + len(ends)]]
            elif not joined.isascii():  # `\d` is every Unicode decimal digit
                out += _DIGITS.sub("0", joined).split("\n")
            else:
                text = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
                digit = (text >= ord("0")) & (text <= ord("9"))
                first = digit.copy()
                first[1:] &= ~digit[:-1]
                masked = np.where(digit, np.uint8(ord("0")), text)[first | ~digit]
                out += masked.tobytes().decode("ascii").split("\n")
    except TypeError:  # a name that is not text: the rule's own error, name by name
        return [_DIGITS.sub("0", n) for n in names]
    return out


def launch_shape(raw: str) -> str:
    """`[65536, 1, 1]` (a trace's grid or block) as `65536×1×1`; '' when absent."""
    parts = [p.strip() for p in str(raw).strip("[] ").split(",") if p.strip()]
    return "×".join(parts)


def kind_of(name: str, cat: str = "kernel") -> str:
    """Kind of a GPU activity from its category and name."""
    if cat == "gpu_memcpy":
        return "memcpy"
    if cat == "gpu_memset":
        return "memset"
    return _kind_of_shape(_DIGITS.sub("0", name))


def kernel_kinds(names: np.ndarray) -> np.ndarray:
    """`kind_of` of kernel names (object strings): each shape (numbers masked) matched once."""
    codes, shapes = pd.factorize(np.array(mask_digits(names), dtype=object))
    return np.array([_kind_of_shape(s) for s in shapes], dtype=object)[codes]


@functools.lru_cache(maxsize=65536)
def _kind_of_shape(name: str) -> str:
    """`kind_of` for a name with its numbers masked: generated kernels (triton_poi_fused_…_123)
    differ only in numbers, which no kind pattern reads, so each shape is matched once."""
    for kind, pattern in KIND_PATTERNS:
        if pattern.search(name):
            return kind
    return "other"


def uses_tensor_cores(name: str, kind: str, dtype: str) -> bool:
    """Whether a matmul-like kernel runs on Tensor Cores (False for every other kind)."""
    if kind not in MATMUL_KINDS:
        return False
    if SIMT_NAME.search(name) and "tf32" not in name.lower():
        return False
    if TENSOR_CORE_NAME.search(name):
        return True
    return dtype in ("bf16", "fp16", "fp8")


def first_float_dtype(input_types: str) -> str:
    """Short dtype of the first floating tensor in an op's `Input type` list."""
    for raw, short in DTYPE_NAMES.items():
        if f'"{raw}"' in input_types:
            return short
    return ""


def kernel_rows(trace: Trace, op_types: pd.Series | None = None) -> pd.DataFrame:
    """GPU activity rows with `kind`, `dtype` and `tensor_core` columns added."""
    gpu = trace.of(*GPU_CATEGORIES)
    cat = gpu["cat"].astype(str).to_numpy()
    kind = per_name(gpu, kernel_kinds, "other")
    kind = np.where(cat == "gpu_memcpy", "memcpy", np.where(cat == "gpu_memset", "memset", kind))
    if op_types is None:
        ops = trace.of("cpu_op")
        ops = ops[ops["external_id"].isin(gpu["external_id"].unique())]
        op_types = pd.Series(ops["input_types"].to_numpy(), index=ops["external_id"].to_numpy())
        op_types = op_types[~op_types.index.duplicated()]
    text = gpu["external_id"].map(op_types).fillna("")
    dtype = text.map({t: first_float_dtype(t) for t in text.unique()}).to_numpy()
    # only a matmul-like kind can run on Tensor Cores: the name test runs on those alone
    tc = np.zeros(len(gpu), dtype=bool)
    matmul = pd.Series(kind, dtype=object).isin(MATMUL_KINDS).to_numpy()
    if matmul.any():
        names = gpu["name"].cat
        keys = pd.DataFrame({"code": names.codes.to_numpy()[matmul], "kind": kind[matmul],
                             "dtype": dtype[matmul]})
        uniq = keys.drop_duplicates()
        cats = names.categories.to_numpy(dtype=object)
        uniq = uniq.assign(tensor_core=[uses_tensor_cores(cats[c], k, d) for c, k, d in zip(
            uniq["code"], uniq["kind"], uniq["dtype"], strict=True)])
        tc[matmul] = keys.merge(uniq, on=["code", "kind", "dtype"],
                                how="left")["tensor_core"].to_numpy(dtype=bool)
    return gpu.assign(kind=kind, dtype=dtype, tensor_core=tc)


def codes_in_order(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a column in order of appearance, and the text of each (−1, a missing value:
    "nan", as `astype(str)` writes it), as object strings: numpy's fixed-width ones drop a
    name's trailing NULs."""
    codes, uniques = pd.factorize(col, sort=False)
    texts = pd.Series(uniques, dtype=object).astype(str).to_numpy(dtype=object)
    return codes, np.append(texts, "nan")


def kernel_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Aggregate by kernel name: columns in `KERNEL_COLUMNS`, longest total first.

    Grouped on the names' codes in order of appearance (hashing every row's name text took
    most of a 300 MB trace's table), the names put back per group."""
    if rows.empty:
        return pd.DataFrame(columns=list(KERNEL_COLUMNS))
    key, labels = codes_in_order(rows["name"])
    keyed = rows.assign(key=key)
    g = keyed.groupby("key", sort=False)
    out = g.agg(
        kind=("kind", "first"), tensor_core=("tensor_core", "any"),
        calls=("dur_us", "size"), total_us=("dur_us", "sum"),
        mean_us=("dur_us", "mean"), median_us=("dur_us", "median"),
    ).reset_index()
    # the largest dtype string per name, vectorised (a string max per group runs in Python)
    top = keyed[["key", "dtype"]].sort_values("dtype").drop_duplicates("key", keep="last")
    out["dtype"] = out["key"].map(pd.Series(top["dtype"].to_numpy(), index=top["key"]))
    out.insert(0, "name", labels[out["key"].to_numpy()])
    total = float(out["total_us"].sum())
    out["pct_of_gpu"] = 100.0 * out["total_us"] / total if total else np.nan
    out["short_name"] = short_kernel_names(out["name"])
    out["tensor_core_eligible"] = out["kind"].isin(MATMUL_KINDS)
    for col in ("grid", "block"):
        out[col] = _most_common_text(keyed, col).reindex(out["key"]).fillna("").to_numpy()
    occ = (rows["occupancy_pct"].astype(float) if "occupancy_pct" in rows
           else pd.Series(np.nan, index=rows.index))
    occ = keyed.assign(occ=occ.where(occ >= 0)).groupby("key", sort=False)["occ"].mean()
    out["occupancy_pct"] = out["key"].map(occ).to_numpy(dtype=float)
    return out[list(KERNEL_COLUMNS)].sort_values("total_us", ascending=False, ignore_index=True)


def _most_common_text(rows: pd.DataFrame, column: str) -> pd.Series:
    """The most frequent launch shape of `column` per kernel (`key`), as `launch_shape` text."""
    if column not in rows:
        return pd.Series(dtype=object)
    pairs = pd.DataFrame({"key": rows["key"].to_numpy(),
                          "v": rows[column].astype(str).to_numpy()})
    top = (pairs.groupby(["key", "v"], sort=False).size().sort_values(ascending=False,
                                                                    kind="stable")
           .reset_index().drop_duplicates("key"))
    shapes = {v: launch_shape(v) for v in top["v"].unique()}  # few distinct shapes
    return pd.Series(top["v"].map(shapes).to_numpy(dtype=object), index=top["key"].to_numpy())


def kind_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """GPU time by kind and Tensor-Core use (for the verdict and the report)."""
    if rows.empty:
        return pd.DataFrame(columns=["kind", "tensor_core", "total_us", "calls"])
    return (rows.groupby(["kind", "tensor_core"], observed=True)["dur_us"]
            .agg(total_us="sum", calls="size").reset_index()
            .sort_values("total_us", ascending=False, ignore_index=True))

"""Every speed-at-scale figure in one run, side by side with HolisticTraceAnalysis (issue 25).

Each figure is a fresh measured process (`bench_analyze_vs_hta.measured`: wall time and the
child's peak RSS), `--repeat` times, medians:

1. the reference trace (300 MB of JSON): ours and HTA; HTA time / ours, peak MB of each
   (target: ≥ 15× faster, ≤ 600 MB); and where our time goes (`bench_phases.py`: read,
   analysis, advice, report) with the what-if's share of what follows the read (≤ 10 %);
2. each `--big` trace (e.g. 1.2 GB and 4 GB): ours, its time as a multiple of the reference
   time and its peak (targets: 1.2 GB ≤ 6× and ≤ 1.5 GB; 4 GB ≤ 2.5 GB); HTA too when its
   expected memory (its measured MB per JSON byte on the reference × this JSON) fits in half
   the memory available now, else the reason it was skipped;
3. 2 M events with 666 k distinct names against the 16-name twin of the same events
   (`make_many_names_trace.py`, made once into `--work`): time ratio (target ≤ 1.5×);
4. `--ranks` (e.g. 8,32,128,256): `bench_multirank.py` on copies of a real 2-rank H200 run with
   a real straggler injected: wall, the parent's and the largest worker's peak, the verdict.

It prints one table and writes every figure to `--json-out`. The big traces are the reference
repeated (times and ids shifted): `--sizes 1.2,4` makes the smallest such traces of at least those
many GB of JSON with `make_scaled_trace.py` (once, into `--work`; a repeat is not the reference's
size: the copies are written compactly), `--scale 5,16` by repeat count; or pass any with
`--big` (the cap on a trace's decompressed size is lifted for the measured runs:
`JUPYTER_GPUPROF_MAX_TRACE_MB`).

    python benchmarks/bench_scale.py --trace .bigtrace/gpt2n_40steps.pt.trace.json.gz \\
        --sizes 1.2,4 --ranks 8,32,128,256 --work .bench --json-out scale.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_analyze_vs_hta import _summ, measured, prepare_hta_dir, write_json  # noqa: E402
from bench_multirank import MODES as RANK_MODES  # noqa: E402

RANK_SOURCE = "tests/data/real/ddp2_heavy1/trace.rank0.json.gz"
RANK_STRAGGLER = "tests/data/real/ddp2_heavy1/trace.rank1.json.gz"
#: a share of the memory available now that HTA may take (the machine is shared)
HTA_MEM_SHARE = 0.5
TARGETS = {  # the acceptance figures, checked in the table
    "ref_speedup_min": 15.0, "ref_peak_mb_max": 600.0, "x1_2GB_time_multiple_max": 6.0,
    "x1_2GB_peak_mb_max": 1536.0, "x4GB_peak_mb_max": 2560.0, "many_names_ratio_max": 1.5,
    "whatif_share_max": 0.10,
}


def json_bytes(path: str) -> int:
    """Uncompressed size of a (gzipped) JSON trace, read through once."""
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    n = 0
    with gzip.open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            n += len(chunk)
    return n


def available_mb() -> float:
    """MemAvailable now, in MB."""
    with open("/proc/meminfo") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("MemAvailable:")) / 1024


def compiled_once(a: argparse.Namespace) -> None:
    """Our package's bytecode compiled once into `--work`, for every measured run, as an
    installed package has it (HTA's, installed, has its own): a checkout run with
    PYTHONDONTWRITEBYTECODE=1 compiles all of its sources again in every process."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(a.work, "pycache")
    where = subprocess.run([a.ours_python, "-c", "import os, jupyter_gpuprof; "
                            "print(os.path.dirname(jupyter_gpuprof.__file__))"],
                           capture_output=True, text=True, check=True, cwd=REPO).stdout.strip()
    subprocess.run([a.ours_python, "-m", "compileall", "-q", where], check=True,
                   stdout=subprocess.DEVNULL)


def ours(trace: str, a: argparse.Namespace, tag: str) -> dict:
    """`analyze TRACE --json` measured `--repeat` times; the verdict of the last run."""
    runs = []
    for i in range(a.repeat):
        out = os.path.join(a.work, f"ours_{tag}_{i}.json")
        r = measured([a.ours_python, "-m", "jupyter_gpuprof", "analyze", trace, "--json"], out)
        try:
            with open(out) as f:
                r["verdict"] = (json.load(f).get("verdict") or {}).get("category")
        except (OSError, ValueError) as e:
            r["verdict"] = f"unreadable output: {type(e).__name__}"
        os.remove(out)
        runs.append(r)
        print(f"  ours {tag} run {i + 1}: rc={r['rc']} {r['wall_s']:.2f} s, "
              f"{r['peak_rss_mb']:.0f} MB, verdict {r['verdict']}", flush=True)
    return {**_summ(runs), "verdict": runs[-1]["verdict"],
            "stderr_tail": runs[-1]["stderr_tail"][-300:] if runs[-1]["rc"] else ""}


def hta(trace: str, a: argparse.Namespace, tag: str) -> dict:
    """HTA load + three analyses, measured `--repeat` times (input folder made untimed)."""
    hdir = prepare_hta_dir(trace, os.path.join(a.work, f"hta_{tag}"))
    runs = []
    for i in range(a.repeat):
        out = os.path.join(a.work, f"hta_{tag}_{i}.out")
        r = measured([a.hta_python, os.path.join(HERE, "bench_analyze_vs_hta.py"),
                      "--hta-worker", hdir], out)
        with open(out) as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith("{")]
        phases = json.loads(lines[-1]).get("phases", {}) if lines else {}
        r["failed"] = [f"{k} ({str(v.get('error'))[:120]})" for k, v in phases.items()
                       if not v.get("ok")]
        r["hta_version"] = json.loads(lines[-1]).get("hta_version") if lines else None
        runs.append(r)
        print(f"  HTA  {tag} run {i + 1}: rc={r['rc']} {r['wall_s']:.2f} s, "
              f"{r['peak_rss_mb']:.0f} MB; failed: {r['failed'] or 'none'}", flush=True)
    return {**_summ(runs), "failed_phases": runs[-1]["failed"],
            "version": runs[-1]["hta_version"]}


def phases(trace: str, a: argparse.Namespace) -> dict:
    """`bench_phases.py` on the trace, in a fresh process: seconds per phase, what-if share."""
    done = subprocess.run([a.ours_python, os.path.join(HERE, "bench_phases.py"), trace],
                          capture_output=True, text=True, cwd=REPO)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode or not lines:
        return {"error": done.stderr[-300:]}
    found: dict = json.loads(lines[-1])
    print(f"  ours phases: read {found['read_s']:.2f} s, analysis {found['analysis_s']:.2f} s, "
          f"advice {found['advice_s']:.2f} s, report {found['report_s']:.2f} s; what-if "
          f"{found['whatif_s']:.2f} s = {100 * found['whatif_share']:.1f} % of what follows "
          "the read", flush=True)
    return found


def scaled(trace: str, n: int, work: str) -> str:
    """`trace` with its steps repeated n times (make_scaled_trace.py), made once into `work`."""
    out = os.path.join(work, f"scaled_x{n}.pt.trace.json.gz")
    gen = os.path.join(HERE, "make_scaled_trace.py")
    if not os.path.exists(out):
        if not os.path.exists(gen):
            raise SystemExit(f"--scale needs {gen}; pass big traces with --big instead")
        subprocess.run([sys.executable, gen, trace, out, "--repeat", str(n)], check=True)
    return out


def repeats_for(sizes_gb: list[float], ref_bytes: int, made_bytes: Callable[[int], int]
                ) -> list[int]:
    """The fewest repeats of the reference whose scaled trace holds at least each size (GB of
    JSON): the first guess from the reference's size, then from the bytes a repeat measured to
    take (`made_bytes(n)`: make the trace of n repeats once, return its JSON bytes)."""
    out: list[int] = []
    per: float | None = None
    for size in sorted(sizes_gb):
        want = size * 1e9
        n = max(1, math.ceil(want / (per or ref_bytes)))
        while True:
            got = made_bytes(n)
            per = got / n
            fewest = max(1, math.ceil(want / per))
            if got >= want and fewest >= n:
                break
            n = fewest if fewest != n else n + 1
        out.append(n)
    return out


def many_names(a: argparse.Namespace) -> dict:
    """The 666 k-distinct-names trace against its 16-name twin (made once into --work)."""
    found = {}
    for kind, extra in (("few", []), ("many", ["--distinct"])):
        path = os.path.join(a.work, f"names_{kind}.json.gz")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "make_many_names_trace.py"),
                            path, "--ops", "666000", *extra], check=True, cwd=REPO)
        found[kind] = ours(path, a, f"names_{kind}")
    found["ratio"] = found["many"]["wall_s_median"] / found["few"]["wall_s_median"]
    return found


def many_ranks(a: argparse.Namespace) -> list[dict]:
    """bench_multirank.py over the rank counts, its rows as they come."""
    out = os.path.join(a.work, "multirank.json")
    subprocess.run([a.ours_python, os.path.join(HERE, "bench_multirank.py"), "--ranks", a.ranks,
                    "--modes", a.rank_modes, "--source", RANK_SOURCE,
                    "--straggler-source", RANK_STRAGGLER, "--json-out", out],
                   check=True, cwd=REPO)
    with open(out) as f:
        rows: list[dict] = json.load(f)
    return rows


def _mark(ok: bool | None) -> str:
    return "" if ok is None else ("met" if ok else "MISSED")


def table(res: dict) -> list[str]:
    """The printed table: one line per figure, ours | HTA | ratio | target."""
    lines = [f"{'figure':<44}{'ours':>22}{'HTA':>22}{'ratio':>10}  target"]
    ref = res["reference"]
    o, h = ref["ours"], ref.get("hta")
    spd = h["wall_s_median"] / o["wall_s_median"] if h else None
    lines.append(f"{'300 MB reference: wall s | peak MB':<44}"
                 f"{o['wall_s_median']:>12.2f} | {o['peak_rss_mb_median']:>6.0f}"
                 + (f"{h['wall_s_median']:>12.2f} | {h['peak_rss_mb_median']:>6.0f}"
                    f"{spd:>9.1f}x  ≥ 15x {_mark(spd >= TARGETS['ref_speedup_min'])}, "
                    if h else f"{'skipped':>22}{'':>10}  ")
                 + f"≤ 600 MB {_mark(o['peak_rss_mb_median'] <= TARGETS['ref_peak_mb_max'])}")
    ph = ref.get("phases") or {}
    if "whatif_share" in ph:
        share, cpu = ph["whatif_share"], ph["whatif_cpu_share"]
        lines.append(f"{'300 MB: what-if share after the read':<44}"
                     f"{100 * share:>11.1f} % (CPU {100 * cpu:.1f} %)"
                     f"{'':>20}  ≤ 10 % {_mark(max(share, cpu) <= TARGETS['whatif_share_max'])}")
        lines.append(f"    read {ph['read_s']:.2f} s, analysis {ph['analysis_s']:.2f} s, advice "
                     f"{ph['advice_s']:.2f} s, report {ph['report_s']:.2f} s, imports "
                     f"{ph['imports_s']:.2f} s (what-if {ph['whatif_s']:.2f} s)")
    elif ph:
        lines.append(f"    phases FAILED: {ph.get('error', '')!r}")
    for b in res["big"]:
        o, h = b["ours"], b.get("hta")
        mult = o["wall_s_median"] / ref["ours"]["wall_s_median"]
        gb = b["json_bytes"] / 1e9
        target = ""
        if 0.9 <= gb <= 1.6:
            target = (f"≤ 6x {_mark(mult <= TARGETS['x1_2GB_time_multiple_max'])}, ≤ 1.5 GB "
                      f"{_mark(o['peak_rss_mb_median'] <= TARGETS['x1_2GB_peak_mb_max'])}")
        elif 3.5 <= gb <= 4.5:
            target = f"≤ 2.5 GB {_mark(o['peak_rss_mb_median'] <= TARGETS['x4GB_peak_mb_max'])}"
        hta_cell = (f"{h['wall_s_median']:>12.2f} | {h['peak_rss_mb_median']:>6.0f}" if h
                    else f"{'skipped':>22}")
        lines.append(f"{f'{gb:.2f} GB (time x{mult:.1f} the 300 MB)':<44}"
                     f"{o['wall_s_median']:>12.2f} | {o['peak_rss_mb_median']:>6.0f}"
                     f"{hta_cell}{'':>10}  {target}")
        if not h:
            lines.append(f"    HTA skipped: {b['hta_skipped']}")
    if "names" in res:
        n = res["names"]
        lines.append(f"{'2 M events, 666 k names / 16 names: wall s':<44}"
                     f"{n['many']['wall_s_median']:>9.2f} / {n['few']['wall_s_median']:<6.2f}"
                     f"{'':>22}{n['ratio']:>9.2f}x  ≤ 1.5x "
                     f"{_mark(n['ratio'] <= TARGETS['many_names_ratio_max'])}")
    for r in res.get("ranks", []):
        ok = r["slowest_rank"] == r["straggler_rank"]
        worker = f"{r['worker_peak_mb']} MB" if r["worker_peak_mb"] else "-"
        lines.append(f"  {r['ranks']:>4} ranks {r['mode']:<15} {r['wall_s']:>7.1f} s, parent "
                     f"{r['parent_peak_mb']} MB, largest worker {worker}, straggler "
                     f"{r['slowest_rank']} {'found' if ok else 'WRONG'} "
                     f"(+{r['slowest_extra_ms']} ms/step)")
    for what, r in _runs(res):
        if r["n_ok"] < r["n"]:
            lines.append(f"    {what}: {r['n'] - r['n_ok']} of {r['n']} runs FAILED "
                         f"{r.get('stderr_tail', '')[-200:]!r}")
        if r.get("failed_phases"):
            lines.append(f"    {what}: HTA phases that raised: {', '.join(r['failed_phases'])}")
    return lines


def _runs(res: dict) -> list[tuple[str, dict]]:
    """Every measured (tool, trace) of the result, named."""
    found = [(f"{tool} on {row['trace']}", row[tool])
             for row in [res["reference"], *res["big"]] for tool in ("ours", "hta") if tool in row]
    found += [(f"ours on the {k}-names trace", v) for k, v in res.get("names", {}).items()
              if isinstance(v, dict)]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", required=True, help="the reference trace (300 MB of JSON)")
    ap.add_argument("--big", action="append", default=[], help="a big trace (repeatable)")
    ap.add_argument("--sizes", default="", help="GB of JSON, e.g. 1.2,4: the smallest scaled "
                    "traces of --trace at least that big (make_scaled_trace.py, once)")
    ap.add_argument("--scale", default="", help="repeat counts, e.g. 5,16 (1.3 and 4.2 GB from "
                    "the 305 MB GPT-2 trace): big traces made from --trace, once")
    ap.add_argument("--ranks", default="8,32,128,256", help="rank counts ('' for none)")
    ap.add_argument("--rank-modes", default="pool,pool-summaries,files",
                    help=f"bench_multirank modes, of {','.join(RANK_MODES)}")
    ap.add_argument("--no-names", action="store_true", help="skip the many-names figure")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--work", default=".bench", help="scratch folder (generated traces kept)")
    ap.add_argument("--ours-python", default=sys.executable)
    ap.add_argument("--hta-python", default=os.path.join(REPO, ".venv-hta", "bin", "python"))
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--json-out")
    a = ap.parse_args(argv)
    a.work = os.path.abspath(a.work)
    # the big traces are past the default cap on a trace's decompressed size (a guard for the
    # server, not a limit of the reader): lifted for the measured runs, which inherit it
    os.environ.setdefault("JUPYTER_GPUPROF_MAX_TRACE_MB", str(64 * 1024))
    os.makedirs(a.work, exist_ok=True)
    a.big += [scaled(a.trace, int(n), a.work) for n in a.scale.split(",") if n]
    if a.sizes:
        made = repeats_for([float(x) for x in a.sizes.split(",") if x], json_bytes(a.trace),
                           lambda n: json_bytes(scaled(a.trace, n, a.work)))
        a.big += [scaled(a.trace, n, a.work) for n in made]
    compiled_once(a)
    use_hta = not a.skip_hta and os.path.exists(a.hta_python)
    res: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                            f"{available_mb() / 1024:.0f} GB available, Python "
                            f"{platform.python_version()}",
                 "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                 "repeat": a.repeat, "targets": TARGETS}
    ref_bytes = json_bytes(a.trace)
    print(f"reference {a.trace}: {ref_bytes / 1e6:.0f} MB of JSON", flush=True)
    res["reference"] = {"trace": a.trace, "json_bytes": ref_bytes, "ours": ours(a.trace, a, "ref"),
                        "phases": phases(a.trace, a)}
    if use_hta:
        res["reference"]["hta"] = hta(a.trace, a, "ref")
    hta_mb_per_byte = (res["reference"]["hta"]["peak_rss_mb_median"] / ref_bytes
                       if use_hta else None)
    res["big"] = []
    for big in a.big:
        nbytes = json_bytes(big)
        print(f"big {big}: {nbytes / 1e9:.2f} GB of JSON", flush=True)
        row: dict = {"trace": big, "json_bytes": nbytes, "ours": ours(big, a, "big")}
        if hta_mb_per_byte is not None:
            need, have = hta_mb_per_byte * nbytes, available_mb()
            if need <= HTA_MEM_SHARE * have:
                row["hta"] = hta(big, a, "big")
            else:
                row["hta_skipped"] = (
                    f"HTA would need ≈{need / 1024:.1f} GB ({hta_mb_per_byte * 1e6:.1f} MB per "
                    f"MB of JSON, as on the reference); {have / 1024:.1f} GB available on a "
                    "shared machine")
        else:
            row["hta_skipped"] = "HTA not run"
        row["time_multiple_of_reference"] = (row["ours"]["wall_s_median"]
                                             / res["reference"]["ours"]["wall_s_median"])
        res["big"].append(row)
    if not a.no_names:
        res["names"] = many_names(a)
    if a.ranks:
        res["ranks"] = many_ranks(a)
    if use_hta:
        res["reference"]["speedup"] = (res["reference"]["hta"]["wall_s_median"]
                                       / res["reference"]["ours"]["wall_s_median"])
    print()
    print(f"machine: {res['machine']}; {res['date_utc']} UTC; {a.repeat} run(s) each, medians")
    print("\n".join(table(res)))
    if a.json_out:
        write_json(a.json_out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())

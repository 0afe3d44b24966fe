"""Score the report on the training-script corpus: verdict against the best fix measured by hand.

    python benchmarks/corpus/score.py docs/evidence/corpus_h200.json [--json OUT]

For each manifest entry: the truth is the by-hand fix (the script's own options or edits, timed
by the script's own log) with the largest wall-time gain (mean ms per iteration where the log
gives it, else the median; where the evidence holds interleaved rounds of a script's fixes,
`fix_rounds`, their reading instead), counted only if it saves at least MIN_TRUTH_GAIN_PCT; its
categories (the manifest's `categories` of that fix) are the verdicts that name it. The
report is re-analysed from the recorded run folder (tests/data/corpus/<id>) with the code of
this checkout, so a change to the analysis is scored on the same traces (where a script's
rounds ran on another card, the run folder recorded beside them on that card: `recording`,
named in the row). Prints one row per
script (verdict right/wrong, the verdict's expected gain against the measured one, the tries
that crashed, seconds to the report) and the totals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fix_rounds import reading  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("manifest.json")
RECORDED = ROOT / "tests" / "data" / "corpus"
EVIDENCE = ROOT / "docs" / "evidence"
#: a fix that saves less than this is no truth to score a verdict against (% of wall time)
MIN_TRUTH_GAIN_PCT = 5.0


def _merged(evidence: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per script: the latest plain run, fixes and tool run over every GPU call (a later call's
    part replaces an earlier one's; transcribed figures only fill what no call kept)."""
    out: dict[str, dict[str, Any]] = {}
    calls = [evidence.get("transcribed", {}).get("results", []),
             *(r["results"] for r in evidence.get("runs", []))]
    for results in calls:
        for r in results:
            mine = out.setdefault(r["id"], {"fixes": {}})
            for part in ("plain", "tool"):
                if r.get(part) and (r[part].get("median_ms") or r[part].get("mean_ms")
                                    or r[part].get("steps") or r[part].get("code")):
                    mine[part] = r[part]
            mine["fixes"].update(r.get("fixes") or {})
    return out


def _gain(plain: dict[str, Any], fixed: dict[str, Any]) -> float | None:
    """A fix's measured gain (%): on the means (wall time, epoch boundaries included) where
    both runs' logs give one, else on the medians."""
    for key in ("mean_ms", "median_ms"):
        if plain.get(key) and fixed.get(key):
            return 100.0 * (1 - fixed[key] / plain[key])
    return None


def _rounds_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A `fix_rounds` entry's rounds: its own, or those of the evidence file it names (`file`,
    beside the corpus evidence)."""
    if "file" in doc:
        return list(json.loads((EVIDENCE / doc["file"]).read_text())["rounds"])
    return list(doc["rounds"])


def recordings(evidence: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per script whose rounds ran on another card than its recorded run: the run folder the
    same session recorded on that card (`recording`, under tests/data/corpus), the card, and
    that session's tool baseline and script alone (the median of its rounds), so that the
    report, its truth and the observer ratio come from one card."""
    out = {}
    for doc in evidence.get("fix_rounds", []):
        if not doc.get("recording"):
            continue
        held = json.loads((EVIDENCE / doc["file"]).read_text()) if "file" in doc else doc
        alone = [r["plain"]["median_ms"] for r in held["rounds"]
                 if (r.get("plain") or {}).get("median_ms")]
        out[doc["id"]] = {"recording": doc["recording"], "device": doc.get("device", ""),
                          "baseline_ms": ((held.get("tool") or {}).get("steps") or {})
                          .get("median_ms"),
                          "plain_ms": statistics.median(alone) if alone else None}
    return out


def round_gains(evidence: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per script, each fix's gain over interleaved rounds (`fix_rounds`: each fix against the
    script alone of its own round, benchmarks/corpus/fix_rounds.py), 0 where the rounds show
    it neither faster nor slower: where a script has them, they outrank one process a
    variant."""
    out: dict[str, dict[str, float]] = {}
    for doc in evidence.get("fix_rounds", []):
        mine = out.setdefault(doc["id"], {})
        rounds = _rounds_of(doc)
        for fix in sorted({f for r in rounds for f in r.get("fixes") or {}}):
            read = reading(rounds, fix)
            if read["gain_pct"] is not None:
                mine[fix] = 0.0 if read["said"] == "not shown" else read["gain_pct"]
    return out


def truth(entry: dict[str, Any], measured: dict[str, Any],
          rounds: dict[str, float] | None = None) -> dict[str, Any] | None:
    """The by-hand fix with the largest measured gain and the verdicts that name it (the
    manifest's `fix_categories`); `compute` (nothing to fix) when none saved
    MIN_TRUTH_GAIN_PCT; None when no fix was measured. `rounds`: the script's gains over
    interleaved rounds (`round_gains`), which replace a fix's one-process gain."""
    plain = measured.get("plain") or {}
    gains = {name: g for name, run in measured.get("fixes", {}).items()
             if (g := _gain(plain, run)) is not None}
    gains.update(rounds or {})
    if not gains:
        return None
    best = max(gains, key=lambda k: gains[k])
    if gains[best] < MIN_TRUTH_GAIN_PCT:
        return {"fix": None, "gain_pct": gains[best], "all": gains, "categories": ["compute"]}
    return {"fix": best, "gain_pct": gains[best], "all": gains,
            "categories": entry.get("fix_categories", {}).get(best, [])}


def report_of(script: str) -> dict[str, Any] | None:
    """The recorded run folder analysed by this checkout (a copy: analysis writes beside it)."""
    from jupyter_gpuprof.report import analyze_path

    folder = RECORDED / script
    if not (folder / "meta.json").is_file():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / script
        shutil.copytree(folder, copy)
        return analyze_path(copy).to_json()


def plain_step_ms(entry: dict[str, Any], plain: dict[str, Any]) -> float | None:
    """The script alone, per step: a value of its log stands for `own_log.per` steps; a record
    says what it was divided by (`per`; one made before said nothing: the manifest's then)."""
    median = plain.get("median_ms")
    per = entry.get("own_log", {}).get("per", 1)
    return None if median is None else median * plain.get("per", per) / per


def score(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per manifest entry."""
    measured, rounds = _merged(evidence), round_gains(evidence)
    elsewhere = recordings(evidence)
    rows = []
    for entry in json.loads(MANIFEST.read_text())["scripts"]:
        m = measured.get(entry["id"], {"fixes": {}})
        t = truth(entry, m, rounds.get(entry["id"]))
        other = elsewhere.get(entry["id"])
        rep = report_of(other["recording"] if other else entry["id"])
        verdict = (rep or {}).get("verdict", {}).get("category")
        top = next((f for f in (rep or {}).get("findings", []) if f["category"] == verdict), None)
        tool = m.get("tool") or {}
        crashed = [f"{x['fix']}: {str(x['error'])[:90]}" for x in tool.get("tries") or []
                   if x.get("error")]
        row: dict[str, Any] = {
            "id": entry["id"], "verdict": verdict,
            "expected_gain_pct": top["expected_gain_pct"] if top else None,
            "truth": t, "tries_crashed": crashed, "report_s": tool.get("wall_s"),
            "baseline_ms": (tool.get("steps") or {}).get("median_ms"),
            "plain_ms": plain_step_ms(entry, m.get("plain") or {}),
            "card": other["device"] if other else None}
        if other:  # that card's session: its tool baseline, the script alone, no report time
            row.update(baseline_ms=other["baseline_ms"], plain_ms=other["plain_ms"],
                       report_s=None)
        if t is not None:
            row["right"] = verdict in t["categories"]
            if t["fix"] is not None and row["expected_gain_pct"] is not None and row["right"]:
                row["gain_error_pts"] = abs(row["expected_gain_pct"] - t["gain_pct"])
        rows.append(row)
    return rows


def _fmt(x: Any, spec: str = ".1f") -> str:
    return "–" if x is None else format(x, spec)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("evidence", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = score(json.loads(args.evidence.read_text()))
    print(f"{'script':26} {'verdict':9} {'expected':>8} {'truth':22} {'measured':>8} "
          f"{'right':5} {'error':>5} {'base/alone':>10} {'report s':>8} crashed tries")
    for r in rows:
        t = r["truth"] or {}
        ratio = (r["baseline_ms"] / r["plain_ms"] if r["baseline_ms"] and r["plain_ms"]
                 else None)
        name = r["id"] + (f" ({r['card'].removeprefix('NVIDIA ').split()[0]})" if r["card"]
                          else "")
        print(f"{name:26} {str(r['verdict']):9} {_fmt(r['expected_gain_pct']):>8} "
              f"{str(t.get('fix')) + ' ' + '/'.join(t.get('categories', [])):22} "
              f"{_fmt(t.get('gain_pct')):>8} {str(r.get('right', '–')):5} "
              f"{_fmt(r.get('gain_error_pts')):>5} {_fmt(ratio, '.2f'):>10} "
              f"{_fmt(r['report_s'], '.0f'):>8} {'; '.join(r['tries_crashed'])}")
    judged = [r for r in rows if "right" in r]
    errors = [r["gain_error_pts"] for r in judged if "gain_error_pts" in r]
    print(f"\nverdict right on {sum(r['right'] for r in judged)} of {len(judged)} scripts with a "
          f"measured truth ({len(rows)} scripts); gain error mean "
          f"{_fmt(statistics.fmean(errors) if errors else None)} points, max "
          f"{_fmt(max(errors) if errors else None)} (over {len(errors)})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Every verdict category and gap cause is complete: label, verdict opening, rule, fix, colours.

`jupyter_gpuprof/categories.py` is the one enum; this enumerates what each member needs, so a
category added there without its rule, fix text or colour fails here, not in a report.
"""

from __future__ import annotations

import re

import pytest
from paths import ROOT
from scenarios import SCENARIOS, scenario_analysis

from jupyter_gpuprof.advice import distributed_rules, fixes, rules
from jupyter_gpuprof.advice.verdict import SUMMARIES, verdict_label
from jupyter_gpuprof.analysis.summary import IDLE_CAUSES
from jupyter_gpuprof.categories import ABOUT, CATEGORIES, GAP_CAUSES, Category, label
from jupyter_gpuprof.views import palette

#: categories priced outside the one-trace rules, and where
ELSEWHERE = {Category.STRAGGLER: distributed_rules.straggler_rule,
             Category.COMPUTE: None}  # the verdict when no finding is worth acting on
#: fix text of each category a one-trace rule prices (the rule pastes it into its finding)
FIX_TEXT = fixes.FIX_OF


@pytest.mark.parametrize("category", list(Category), ids=str)
def test_every_category_has_a_label_an_opening_and_a_rule(category):
    about = ABOUT[category]
    assert about.label and about.summary and SUMMARIES[category.value] == about.summary
    assert verdict_label(category.value) == label(category.value) == about.label
    assert category in rules.RULES or category in ELSEWHERE


def test_every_one_trace_rule_but_one_time_has_its_fix_text():
    assert set(FIX_TEXT) == set(rules.RULES) - {Category.ONE_TIME}


@pytest.mark.parametrize("category", [c for c in SCENARIOS if c in FIX_TEXT])
def test_every_priced_category_has_its_fix_as_code(tmp_path, category):
    """Each one-trace rule's finding on its scenario carries its category's fix text."""
    finding = rules.RULES[Category(category)](scenario_analysis(tmp_path, SCENARIOS[category]))
    assert finding is not None and finding.category == category
    assert FIX_TEXT[Category(category)].strip() and finding.fix == FIX_TEXT[Category(category)]


def test_gap_causes_are_the_categories_marked_so_with_both_colours():
    assert IDLE_CAUSES == GAP_CAUSES == tuple(c for c in CATEGORIES if ABOUT[Category(c)].gap_cause)
    assert tuple(palette.CAUSE_COLORS) == GAP_CAUSES
    assert all(c in palette.LIGHT_COLORS and c in palette.DARK_COLORS for c in GAP_CAUSES)


def test_the_widget_reads_labels_and_causes_from_the_generated_file():
    generated = (ROOT / palette.TS_FILE).read_text()
    assert generated == palette.typescript()  # regenerate: python -m jupyter_gpuprof.views.palette
    for c, about in ABOUT.items():
        assert f'"{c.value}": "{about.label}"' in generated
    # no TypeScript module spells the causes or a label rule again
    for path in (ROOT / "src").rglob("*.ts"):
        if "generated" in path.parts or "__tests__" in path.parts:
            continue
        text = path.read_text()
        assert not re.search(r"'input',\s*'transfer',\s*'sync'", text), path
        assert "'memory bandwidth'" not in text, path

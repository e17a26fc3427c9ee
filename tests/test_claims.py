"""Every preset states its claim as data (``[site.claim]``, DESIGN.md "Presets"), and the claim
holds at its virtual time ``at`` on several seeds, not on one lucky seed.

A claim orders ``panels`` best first: each beats the next by at least ``margin`` in ``metric``.
``seeds`` (default 5) seeds are tried, the preset's own and the ones after it; the claim must hold
on ``holds_on`` of them (default: all). A claim that holds on fewer than all says so in its
preset's text ("holds on 4 of 5 seeds"). For a lower-is-better metric, a panel's figure that is a
censored lower bound (``<metric>_censored: 1``) cannot prove it beats the next one.
"""

from __future__ import annotations

import math
import re

import pytest

from sims.core import api, presets
from sims.core.scenario import Scenario

NAMES = sorted(presets.preset_names())


def claim_of(p: presets.Preset) -> dict:
    claim = p.site.get("claim")
    assert isinstance(claim, dict), f"{p.name}: no [site.claim] table"
    return claim


def check_shape(p: presets.Preset, claim: dict) -> None:
    names = [s.name for s in p.panels]
    assert isinstance(claim.get("metric"), str), f"{p.name}: claim.metric must be a metric name"
    panels = claim.get("panels")
    assert isinstance(panels, list) and len(panels) >= 2, f"{p.name}: claim.panels needs two or more panels"
    assert len(set(panels)) == len(panels), f"{p.name}: claim.panels repeats a panel"
    for name in panels:
        assert name in names, f"{p.name}: claim panel {name!r} is not one of {names}"
    margin = claim.get("margin")
    assert isinstance(margin, int | float) and margin >= 0 and math.isfinite(margin), f"{p.name}: claim.margin"
    at = claim.get("at", 30.0)
    assert isinstance(at, int | float) and 0 < at <= p.duration, f"{p.name}: claim.at must lie in (0, duration]"
    assert isinstance(claim.get("higher_is_better"), bool), f"{p.name}: claim.higher_is_better must be a bool"
    seeds = claim.get("seeds", 5)
    holds_on = claim.get("holds_on", seeds)
    assert isinstance(seeds, int) and seeds >= 5, f"{p.name}: claim.seeds must be at least 5"
    assert isinstance(holds_on, int) and 1 <= holds_on <= seeds, f"{p.name}: claim.holds_on in 1..seeds"
    if holds_on < seeds:
        text = " ".join([p.title, p.watch_for, p.description or ""])
        assert f"{holds_on} of {seeds}" in text, (
            f"{p.name}: the claim holds on {holds_on} of {seeds} seeds; its title, watch_for or "
            f"description must say so ('{holds_on} of {seeds}')"
        )


def holds(p: presets.Preset, claim: dict, seed: int) -> tuple[bool, str]:
    metric, order = claim["metric"], claim["panels"]
    sc = Scenario(p, seed, panels=order)
    sc.advance(float(claim.get("at", 30.0)))
    m = sc.metrics()
    for name in order:
        assert metric in m[name], f"{p.name}: panel {name!r} reports no metric {metric!r}"
    higher = claim["higher_is_better"]
    for better, worse in zip(order, order[1:], strict=False):
        a, b = m[better][metric], m[worse][metric]
        gap = a - b if higher else b - a
        if not higher and m[better].get(f"{metric}_censored", 0):
            return False, f"seed {seed}: {better}'s {metric} is a censored lower bound"
        if not gap >= claim["margin"]:
            return False, f"seed {seed}: {better} {metric}={a!r} vs {worse} {b!r} (need a margin of {claim['margin']})"
    return True, ""


@pytest.mark.slow  # every preset on five seeds: `make test` runs it, `make check` does not
@pytest.mark.parametrize("name", NAMES)
def test_claim_holds_on_several_seeds(name):
    p = presets.load(name)
    claim = claim_of(p)
    check_shape(p, claim)
    seeds = claim.get("seeds", 5)
    results = [holds(p, claim, p.seed + k) for k in range(seeds)]
    ok = sum(1 for good, _ in results if good)
    need = claim.get("holds_on", seeds)
    assert ok >= need, f"{name}: claim holds on {ok} of {seeds} seeds, needs {need}: " + "; ".join(
        why for good, why in results if not good
    )


PLAY_SECONDS = 20.0  # wall seconds of play within which a preset page must make its point


def reach(p: presets.Preset) -> float:
    """The virtual time a page reaches after PLAY_SECONDS of playing at its default speed from its
    start (the browser's test_layout.py checks that a page really starts there at that speed)."""
    return min(p.duration, api.default_start(p) + PLAY_SECONDS * api.default_speed(p))


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", NAMES)
def test_the_claim_shows_within_twenty_seconds_of_play(name):
    """The claim already holds at the moment a reader reaches after 20 s of play, and its `at`
    (checked on several seeds above) is a moment the page reaches by then."""
    p = presets.load(name)
    claim = claim_of(p)
    t = reach(p)
    assert float(claim.get("at", 30.0)) <= t + 1e-9, (
        f"{name}: claim.at {claim.get('at')} s comes after the {t:g} s a page reaches in {PLAY_SECONDS:g} s of play "
        f"(start {api.default_start(p):g} s, speed {api.default_speed(p):g}x)"
    )
    ok, why = holds(p, dict(claim, at=t), p.seed)
    assert ok, f"{name}: after {PLAY_SECONDS:g} s of play (t = {t:g} s): {why}"


def named_in(title: str, name: str) -> bool:
    """Whether ``title`` names ``name`` as a word (first_fit, estimated_prefix, rho_95)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", title) is not None


@pytest.mark.parametrize("name", NAMES)
def test_the_panels_the_claim_and_the_title_name_are_on_by_default(name):
    p = presets.load(name)
    shown = api.shown_panels(p)
    for panel in claim_of(p)["panels"]:
        assert panel in shown, f"{name}: the claim's panel {panel!r} is not shown by default ({shown})"
    policies = [s.policy for s in p.panels]
    for spec in p.panels:  # by its name, or by its policy where no other panel has that policy
        if named_in(p.title, spec.name) or (policies.count(spec.policy) == 1 and named_in(p.title, spec.policy)):
            assert spec.name in shown, f"{name}: the title names {spec.name!r}, which is not shown by default ({shown})"


@pytest.mark.parametrize("name", [n for n in NAMES if presets.load(n).site.get("xy")])
def test_a_chart_across_the_panels_plots_metrics_they_report(name):
    p = presets.load(name)
    metrics = Scenario(p, events=[]).metrics()
    for axis in ("x", "y"):
        metric = p.site["xy"][axis]
        assert all(metric in m for m in metrics.values()), (
            f"{name}: xy.{axis} {metric!r} is not reported by every panel"
        )

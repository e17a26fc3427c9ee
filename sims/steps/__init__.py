"""Algorithms that run one step at a time: the machinery the graphs, sorting (and trees) topics share.

An algorithm is a policy whose ``run`` is a generator of steps (``base.py``): each step names the
pseudocode line it ran and carries a sentence, formatted only when a view asks for it.
``StepPanel`` (``panel.py``) takes one step every ``1 / speed`` virtual seconds over the input
that one stream event brings, so play, step, seek and checkpoints work as in every topic. A topic
brings its mechanism (the state its algorithms mutate), its panel's ``start``, ``metrics`` and
``view``, and draws the shared parts with ``web/static/js/stepframe.js``.
"""

from __future__ import annotations

from sims.steps.base import Step, StepAlgorithm, narrate, show
from sims.steps.panel import StepPanel

__all__ = ["Step", "StepAlgorithm", "StepPanel", "narrate", "show"]

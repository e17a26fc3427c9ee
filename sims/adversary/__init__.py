"""Adversary search: the workload that most separates two policies (``contention search``).

``Problem`` (``evaluate.py``) scores a candidate workload by an objective (``objective.py``)
over the topic's own panels; ``Search`` (``local.py``) walks candidates by seeded local search;
``write_preset`` (``writer.py``) writes the best as a preset file ``contention run`` plays.
Standard library only and deterministic: it runs unchanged in the browser's worker.
"""

from __future__ import annotations

from sims.adversary.evaluate import PanelPlan, Problem
from sims.adversary.local import Search
from sims.adversary.objective import Objective, ObjectiveError
from sims.adversary.topics import SPECS, spec_of

__all__ = ["SPECS", "Objective", "ObjectiveError", "PanelPlan", "Problem", "Search", "spec_of"]

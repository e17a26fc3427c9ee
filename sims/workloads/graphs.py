"""The graphs topic's workload lives in its package (``sims.graphs.workload``); importing it
here registers it with the other workload generators."""

from sims.graphs import workload as _graphs  # noqa: F401

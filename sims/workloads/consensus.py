"""The consensus topic's workload lives in its package (``sims.consensus.workload``); importing it
here registers it when the workload modules are discovered."""

from sims.consensus import workload as _consensus  # noqa: F401

"""The gc topic's workload lives in its package (``sims.gc.workload``); importing it here
registers the ``mutator`` kind with the other workload generators."""

from sims.gc import workload as _mutator  # noqa: F401

"""The queues topic's workload lives in its package (``sims.queues.workload``); importing it
here registers it when the workload modules are discovered."""

from sims.queues import workload as _queueing  # noqa: F401

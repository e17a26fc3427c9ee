"""The replication topic's workload lives in its package (``sims.replication.workload``);
importing it here registers it wherever workloads are listed."""

from sims.replication import workload as _registers  # noqa: F401

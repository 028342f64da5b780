"""Models of the planner app: organisations, clients, plans and workloads."""

from .jobs import Job, JobStatus
from .organisations import Membership, Organisation, Role
from .plans import Client, Plan, Precision, Workload, WorkloadKind
from .tokens import ApiToken

__all__ = [
    "ApiToken",
    "Client",
    "Job",
    "JobStatus",
    "Membership",
    "Organisation",
    "Plan",
    "Precision",
    "Role",
    "Workload",
    "WorkloadKind",
]

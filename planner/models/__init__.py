"""Models of the planner app: organisations, clients, plans and workloads."""

from .organisations import Membership, Organisation, Role
from .plans import Client, Plan, Precision, Workload, WorkloadKind

__all__ = [
    "Client",
    "Membership",
    "Organisation",
    "Plan",
    "Precision",
    "Role",
    "Workload",
    "WorkloadKind",
]

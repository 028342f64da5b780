"""Models of the planner app: organisations, clients, plans and workloads."""

from .organisations import Membership, Organisation, Role
from .plans import Client, Plan, Precision, Workload, WorkloadKind
from .tokens import ApiToken

__all__ = [
    "ApiToken",
    "Client",
    "Membership",
    "Organisation",
    "Plan",
    "Precision",
    "Role",
    "Workload",
    "WorkloadKind",
]

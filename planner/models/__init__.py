"""Models of the planner app: organisations, invitations, clients, plans and workloads."""

from .invitations import Invitation, InvitationState
from .jobs import Job, JobStatus
from .operations import OperationsPlan
from .organisations import Membership, Organisation, Role
from .plans import Client, Plan, Precision, Serving, VatRecovery, Workload, WorkloadKind
from .state import StateGeneration
from .tokens import ApiToken

__all__ = [
    "ApiToken",
    "Client",
    "Job",
    "JobStatus",
    "Invitation",
    "InvitationState",
    "Membership",
    "OperationsPlan",
    "Organisation",
    "Plan",
    "Precision",
    "Serving",
    "Role",
    "StateGeneration",
    "VatRecovery",
    "Workload",
    "WorkloadKind",
]

"""Models of the planner app: organisations now; clients and plans join them later."""

from .organisations import Membership, Organisation, Role

__all__ = ["Membership", "Organisation", "Role"]

"""The database's state generation: what lets a computed result be kept across requests."""

from django.db import models


class StateGeneration(models.Model):
    """One row whose token is replaced after every committed write (``planner.computed``).

    A process keeps a result computed from the database (the TCO inputs' hash) beside the
    token it read before computing it, and uses it again only while the token is the same:
    a write anywhere, by any process, gives the next reader a new token. The token is random
    (never reused, even after the table is emptied); a missing row keeps nothing.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    token = models.CharField(max_length=32)

    class Meta:
        db_table = "planner_stategeneration"

    def __str__(self) -> str:
        return self.token

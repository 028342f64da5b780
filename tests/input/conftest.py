"""Fixtures of the bad-input tests: the demo plan as `make run` builds it."""

import pytest


@pytest.fixture
def signed_in(client, demo):
    client.force_login(demo[1])
    return client

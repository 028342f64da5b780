"""Fixtures of the bad-input tests: the demo plan as `make run` builds it."""

import pytest


@pytest.fixture
def demo(db):
    """(plan, user, organisation) of the demo consultancy."""
    from catalog.services import catalog_load_reference
    from planner.demo import demo_plan_build
    from planner.services import demo_setup

    catalog_load_reference()
    user, organisation, _ = demo_setup(
        username="demo", password="pw-for-tests-1", organisation_name="Demo Co"
    )
    plan, _ = demo_plan_build(organisation=organisation, user=user)
    return plan, user, organisation


@pytest.fixture
def signed_in(client, demo):
    client.force_login(demo[1])
    return client

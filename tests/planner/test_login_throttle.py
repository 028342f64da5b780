"""Sign-in throttling (django-axes): per user at an address, per address, with a clear message
on the sign-in page, a cool-off, and the same client address as share links."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.conftest import make_member

PASSWORD = "pw-for-tests-1"


@pytest.fixture
def alice(org_a):
    return make_member(org_a, "alice")


def _sign_in(client, username, password, **meta):
    return client.post(reverse("login"), {"username": username, "password": password}, **meta)


def _signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_thirty_wrong_passwords_then_the_right_one_does_not_sign_in(alice, settings):
    client = Client()
    statuses = [_sign_in(client, "alice", f"wrong-{i}").status_code for i in range(30)]
    limit = settings.LOGIN_FAILURE_LIMIT_PER_USER
    assert statuses[: limit - 1] == [200] * (limit - 1)  # the form again, with its error
    assert set(statuses[limit:]) == {429}
    right = _sign_in(client, "alice", PASSWORD)
    assert right.status_code == 429 and not _signed_in(client)
    body = right.content.decode()
    assert "Too many failed sign-ins" in body and "15 minutes" in body
    assert 'name="username"' in body  # still the sign-in page, not a bare error


def test_a_locked_user_can_still_sign_in_from_elsewhere(alice, settings):
    for i in range(settings.LOGIN_FAILURE_LIMIT_PER_USER):
        _sign_in(Client(), "alice", f"wrong-{i}", REMOTE_ADDR="198.51.100.66")
    elsewhere = Client()
    assert _sign_in(elsewhere, "alice", PASSWORD, REMOTE_ADDR="192.0.2.10").status_code == 302
    assert _signed_in(elsewhere)


def test_thirty_usernames_from_one_address_are_limited(alice, settings):
    client = Client()
    statuses = [
        _sign_in(client, f"user{i}", "guess", REMOTE_ADDR="198.51.100.7").status_code
        for i in range(30)
    ]
    per_address = settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
    assert statuses[: per_address - 1] == [200] * (per_address - 1)
    assert set(statuses[per_address:]) == {429}
    # Even a real user's right password is refused from that address, not from others.
    assert _sign_in(client, "alice", PASSWORD, REMOTE_ADDR="198.51.100.7").status_code == 429
    assert _sign_in(Client(), "alice", PASSWORD, REMOTE_ADDR="198.51.100.8").status_code == 302


def test_one_ipv6_64_counts_as_one_address(alice, settings):
    for i in range(settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS):
        _sign_in(Client(), f"user{i}", "guess", REMOTE_ADDR=f"2001:db8:5:6::{i + 1:x}")
    assert (
        _sign_in(Client(), "alice", PASSWORD, REMOTE_ADDR="2001:db8:5:6::ffff").status_code == 429
    )
    assert _sign_in(Client(), "alice", PASSWORD, REMOTE_ADDR="2001:db8:5:7::1").status_code == 302


def test_behind_the_proxy_the_forwarded_client_is_limited_not_the_proxy(alice, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = {"REMOTE_ADDR": "10.0.0.5"}
    for i in range(settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS + 2):
        _sign_in(Client(), f"user{i}", "guess", HTTP_X_FORWARDED_FOR="198.51.100.66", **proxy)
    blocked = _sign_in(Client(), "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.66", **proxy)
    assert blocked.status_code == 429
    other = _sign_in(Client(), "alice", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.7", **proxy)
    assert other.status_code == 302
    assert AccessAttempt.objects.filter(ip_address="198.51.100.66").exists()


def test_the_lock_lifts_after_the_cool_off(alice, settings):
    client = Client()
    for i in range(settings.LOGIN_FAILURE_LIMIT_PER_USER):
        _sign_in(client, "alice", f"wrong-{i}")
    assert _sign_in(client, "alice", PASSWORD).status_code == 429
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert _sign_in(client, "alice", PASSWORD).status_code == 302


def test_fewer_failures_than_the_limit_then_the_right_password_signs_in_and_resets(alice, settings):
    client = Client()
    for i in range(settings.LOGIN_FAILURE_LIMIT_PER_USER - 1):
        _sign_in(client, "alice", f"wrong-{i}")
    assert _sign_in(client, "alice", PASSWORD).status_code == 302
    assert not AccessAttempt.objects.filter(username="alice", failures_since_start__gt=0).exists()

"""The one client-address helper that login throttling and share links both use."""

import pytest
from django.test import RequestFactory

from planner.client_ip import client_ip, rate_limit_address, rate_limit_key


def _request(remote="10.0.0.5", forwarded=None):
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **meta)


def test_by_default_the_socket_address_is_the_client_and_the_header_is_ignored(settings):
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(_request("192.0.2.1", "198.51.100.1")) == "192.0.2.1"


@pytest.mark.parametrize(
    ("trusted", "forwarded", "expected"),
    [
        (1, "198.51.100.1", "198.51.100.1"),
        # The client may send its own header: our proxy appends the real address on the right.
        (1, "1.2.3.4, 198.51.100.1", "198.51.100.1"),
        (2, "1.2.3.4, 198.51.100.1, 10.0.0.9", "198.51.100.1"),
        (1, "[2001:db8::7]:5555", "2001:db8::7"),
        (1, "198.51.100.1:443", "198.51.100.1"),
        (1, "::ffff:198.51.100.1", "198.51.100.1"),
        (1, "not-an-address", None),
        (1, "", "10.0.0.5"),  # no header: the proxy was skipped, the socket is all we know
    ],
)
def test_the_right_most_untrusted_entry_is_the_client(settings, trusted, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = trusted
    assert client_ip(_request("10.0.0.5", forwarded)) == expected


def test_ipv6_is_grouped_by_64_and_ipv4_by_address():
    assert rate_limit_key("2001:db8:1:2::1") == rate_limit_key("2001:db8:1:2:ffff::9")
    assert rate_limit_key("2001:db8:1:2::1") != rate_limit_key("2001:db8:1:3::1")
    assert rate_limit_key("192.0.2.1") != rate_limit_key("192.0.2.2")
    assert rate_limit_key(None) == "unknown"


def test_the_address_axes_stores_is_a_valid_ip_naming_the_64(settings):
    settings.TRUSTED_PROXY_COUNT = 0
    assert rate_limit_address(_request("2001:db8:1:2:abcd::1")) == "2001:db8:1:2::"
    assert rate_limit_address(_request("192.0.2.1")) == "192.0.2.1"

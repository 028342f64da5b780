"""The client's address, as far as we can trust it, and the key rate limits count it under.

One helper for every rate limit (login throttling by django-axes, share-link guesses), so
both agree on who the client is.

Behind ``TRUSTED_PROXY_COUNT`` reverse proxies (settings; environment variable of the same
name, default 0) each proxy appends the address it received the request from to
``X-Forwarded-For``. Reading from the right, the last ``TRUSTED_PROXY_COUNT`` hops (the socket
address and the entries our proxies appended) are ours; the next entry to the left is the
first address no proxy of ours vouches for: the client. Entries further left were written by
the client itself and are never read. With the default of 0 the socket address is the client
and the header is ignored, so nobody can pick their own address by sending the header.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

IPV6_GROUP_PREFIX = 64  # one customer's IPv6 allocation: limit the /64, not each address

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse(raw: str | None) -> IPAddress | None:
    if not raw:
        return None
    text = raw.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "192.0.2.1:443"
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def client_address(request: HttpRequest) -> IPAddress | None:
    """The client's address: the right-most ``X-Forwarded-For`` entry our proxies did not add.

    Returns ``None`` when no usable address is known (no socket address, or a malformed entry
    where the client's should be).
    """
    remote = request.META.get("REMOTE_ADDR")
    trusted = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if trusted <= 0:
        return _parse(remote)
    forwarded = [
        entry.strip()
        for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if entry.strip()
    ]
    chain = [*forwarded, remote or ""]
    # chain[-1] is the socket (our nearest proxy), chain[-trusted] our farthest proxy.
    if len(chain) <= trusted:
        # Fewer hops than proxies: the request skipped a proxy; the left-most is all we have.
        return _parse(chain[0])
    return _parse(chain[-(trusted + 1)])


def client_ip(request: HttpRequest) -> str | None:
    """:func:`client_address` as text (what logs and django-axes store), or ``None``."""
    address = client_address(request)
    return str(address) if address is not None else None


def rate_limit_key(address: IPAddress | str | None) -> str:
    """The key a per-address limit counts under: an IPv4 address, or an IPv6 address's /64.

    One IPv6 host usually holds a whole /64 and can use a new address per request, so the
    /64 is the smallest unit that is one client. ``None`` (unknown) is one shared key.
    """
    if isinstance(address, str):
        address = _parse(address)
    if address is None:
        return "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        network = ipaddress.IPv6Network((address, IPV6_GROUP_PREFIX), strict=False)
        return str(network)
    return str(address)


def rate_limit_address(request: HttpRequest) -> str | None:
    """The client as one IP address per rate-limit group, for django-axes (which stores an IP).

    IPv4: the address itself. IPv6: the first address of its /64, so every address of one
    /64 counts as the same client.
    """
    address = client_address(request)
    if isinstance(address, ipaddress.IPv6Address):
        return str(
            ipaddress.IPv6Network((address, IPV6_GROUP_PREFIX), strict=False).network_address
        )
    return str(address) if address is not None else None

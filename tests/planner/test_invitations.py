"""Members join by invitation: the owner learns nothing about accounts, nobody is added without
accepting, links expire, can be revoked, work once, and stay inside their organisation."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from planner.models import Invitation, Membership, Role
from tests.conftest import make_member


def _invite(client, email, role="consultant"):
    return client.post(reverse("organisation"), {"email": email, "role": role}, follow=True)


def _link(message) -> str:
    return re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", message.body).group(1)


def _message_shown(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def test_inviting_answers_the_same_whether_or_not_the_address_has_an_account(
    client, owner_a, owner_b, org_a
):
    client.force_login(owner_a)
    existing = _invite(client, "owner_b@example.com")  # an account, in another organisation
    unknown = _invite(client, "nobody@example.com")
    shown = [_message_shown(existing), _message_shown(unknown)]
    assert shown[0].replace("owner_b@example.com", "X") == shown[1].replace(
        "nobody@example.com", "X"
    )
    assert existing.status_code == unknown.status_code == 200
    # Nobody was added, no account was created: both got an e-mail with a link.
    assert not Membership.objects.filter(organisation=org_a, user=owner_b).exists()
    assert not User.objects.filter(email="nobody@example.com").exists()
    assert [m.to for m in mail.outbox] == [["owner_b@example.com"], ["nobody@example.com"]]
    assert mail.outbox[0].body.replace("owner_b@example.com", "X").count("/invitations/") == 1
    # Only a hash of the token is stored: the link's token is nowhere in the database.
    token = _link(mail.outbox[0]).split("/")[2]
    assert not Invitation.objects.filter(token_sha256=token).exists()
    assert all(token not in str(v) for v in Invitation.objects.values_list())


def test_a_new_person_creates_an_account_through_the_link_and_joins(client, owner_a, org_a):
    client.force_login(owner_a)
    _invite(client, "New.Person@Example.com", role="viewer")
    link = _link(mail.outbox[0])

    guest = Client()
    page = guest.get(link)
    assert page.status_code == 200 and "Alpha Advisory" in page.content.decode()
    assert page["Referrer-Policy"] == "same-origin"
    joined = guest.post(
        link,
        {"username": "newperson", "password1": "a-long-pass-phrase-9", "password2": "a-long-pass-phrase-9"},
        follow=True,
    )  # fmt: skip
    assert joined.status_code == 200 and "You joined Alpha Advisory" in joined.content.decode()
    user = User.objects.get(username="newperson")
    assert user.email == "new.person@example.com"
    assert Membership.objects.get(user=user).role == Role.VIEWER
    assert Invitation.objects.get().accepted_by == user
    # The link works once.
    assert Client().get(link).status_code == 404


def test_someone_with_an_account_signs_in_then_accepts(client, owner_a, owner_b, org_a):
    client.force_login(owner_a)
    _invite(client, "owner_b@example.com", role="consultant")
    link = _link(mail.outbox[0])
    guest = Client()
    page = guest.get(link).content.decode()
    assert f'href="/accounts/login/?next={link}"' in page  # sign in, come back here
    guest.force_login(owner_b)
    assert not Membership.objects.filter(organisation=org_a, user=owner_b).exists()  # not yet
    response = guest.post(link, follow=True)
    assert "You joined Alpha Advisory" in response.content.decode()
    assert Membership.objects.get(organisation=org_a, user=owner_b).role == Role.CONSULTANT
    assert Membership.objects.filter(user=owner_b).count() == 2  # still in their own too


def test_creating_an_account_for_an_address_that_has_one_says_sign_in(client, owner_a, owner_b):
    client.force_login(owner_a)
    _invite(client, "owner_b@example.com")
    response = Client().post(
        _link(mail.outbox[0]),
        {"username": "second", "password1": "a-long-pass-phrase-9", "password2": "a-long-pass-phrase-9"},
    )  # fmt: skip
    assert response.status_code == 400 and "sign in to accept" in response.content.decode()
    assert not User.objects.filter(username="second").exists()


def test_an_expired_invitation_cannot_be_accepted(client, owner_a, owner_b, org_a):
    client.force_login(owner_a)
    _invite(client, "owner_b@example.com")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    guest = Client()
    guest.force_login(owner_b)
    page = guest.get(_link(mail.outbox[0]))
    assert page.status_code == 404 and "no longer valid" in page.content.decode()
    assert guest.post(_link(mail.outbox[0])).status_code == 404
    assert not Membership.objects.filter(organisation=org_a, user=owner_b).exists()
    # An expired invitation is no longer listed as pending.
    assert "owner_b@example.com" not in client.get(reverse("organisation")).content.decode()


def test_the_owner_revokes_a_pending_invitation(client, owner_a, owner_b, org_a):
    client.force_login(owner_a)
    _invite(client, "owner_b@example.com")
    invitation = Invitation.objects.get()
    page = client.get(reverse("organisation")).content.decode()
    assert "Pending invitations" in page and "owner_b@example.com" in page
    client.post(reverse("invitation_revoke", args=[invitation.pk]))
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None
    guest = Client()
    guest.force_login(owner_b)
    assert guest.post(_link(mail.outbox[0])).status_code == 404
    assert not Membership.objects.filter(organisation=org_a, user=owner_b).exists()


def test_a_new_invitation_replaces_the_open_one(client, owner_a):
    client.force_login(owner_a)
    _invite(client, "someone@example.com")
    _invite(client, "someone@example.com", role="viewer")
    first, second = _link(mail.outbox[0]), _link(mail.outbox[1])
    assert Client().get(first).status_code == 404
    assert Client().get(second).status_code == 200
    assert Invitation.objects.filter(revoked_at=None).count() == 1


def test_inviting_a_member_says_so_and_keeps_what_was_typed(client, owner_a, consultant_a):
    client.force_login(owner_a)
    response = client.post(
        reverse("organisation"), {"email": "consultant_a@example.com", "role": "owner"}
    )
    assert response.status_code == 400
    content = response.content.decode()
    assert "already a member" in content
    assert 'value="consultant_a@example.com"' in content
    assert not mail.outbox


@pytest.mark.parametrize("role", ["consultant", "viewer"])
def test_only_owners_invite_and_revoke(client, org_a, owner_a, role):
    member = make_member(org_a, f"m_{role}", role)
    owner = Client()
    owner.force_login(owner_a)
    _invite(owner, "someone@example.com")
    invitation = Invitation.objects.get()
    client.force_login(member)
    assert "Pending invitations" not in client.get(reverse("organisation")).content.decode()
    assert client.post(reverse("invitation_revoke", args=[invitation.pk])).status_code == 403
    _invite(client, "other@example.com")
    assert Invitation.objects.count() == 1 and len(mail.outbox) == 1


def test_no_leak_across_organisations(client, owner_a, owner_b, org_a, org_b):
    other = Client()
    other.force_login(owner_b)
    _invite(other, "secret.hire@example.com")
    invitation_b = Invitation.objects.get(organisation=org_b)
    client.force_login(owner_a)
    assert "secret.hire" not in client.get(reverse("organisation")).content.decode()
    assert client.post(reverse("invitation_revoke", args=[invitation_b.pk])).status_code == 404
    invitation_b.refresh_from_db()
    assert invitation_b.is_pending
    # A's owner inviting the same address is independent of B's invitation.
    _invite(client, "secret.hire@example.com")
    assert Invitation.objects.filter(revoked_at=None).count() == 2


def test_wrong_tokens_look_alike(client, db):
    for token in ("x" * 43, "a" * 500):
        response = client.get(reverse("invitation_accept", args=[token]))
        assert response.status_code == 404 and "no longer valid" in response.content.decode()


def test_a_mail_server_outage_is_a_message_not_a_500(client, owner_a, monkeypatch):
    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("SMTP server down")

    monkeypatch.setattr("planner.invitations.send_mail", refuse)
    client.force_login(owner_a)
    response = client.post(reverse("organisation"), {"email": "a@example.com", "role": "viewer"})
    assert response.status_code == 400
    assert "could not be sent" in response.content.decode()
    assert not Invitation.objects.exists()

"""Organisation pages: members, roles, switching, and the password-reset flow."""

from django.contrib.auth.models import User
from django.core import mail
from django.urls import reverse

from planner.models import Invitation, Membership, Organisation, Role
from tests.conftest import make_member


def test_adding_an_existing_member_keeps_the_email_and_says_why(client, owner_a, consultant_a):
    client.force_login(owner_a)

    response = client.post(
        reverse("organisation"), {"email": "consultant_a@example.com", "role": "owner"}
    )

    assert response.status_code == 400
    content = response.content.decode()
    assert "already a member" in content
    assert 'value="consultant_a@example.com"' in content  # nothing typed is lost


def test_bad_email_gets_a_message_next_to_the_field(client, owner_a):
    client.force_login(owner_a)
    response = client.post(reverse("organisation"), {"email": "not-an-email", "role": "viewer"})
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()


def test_consultant_cannot_invite_or_edit_members(client, consultant_a, owner_a):
    client.force_login(consultant_a)
    client.post(reverse("organisation"), {"email": "x@example.com", "role": "owner"})
    assert not User.objects.filter(email="x@example.com").exists()
    assert not Invitation.objects.exists() and not mail.outbox
    owner_membership = Membership.objects.get(user=owner_a)
    response = client.post(reverse("member_edit", args=[owner_membership.pk]), {"role": "viewer"})
    assert response.status_code == 403
    owner_membership.refresh_from_db()
    assert owner_membership.role == Role.OWNER


def test_owner_changes_a_role_and_removes_a_member(client, owner_a, consultant_a):
    client.force_login(owner_a)
    membership = Membership.objects.get(user=consultant_a)

    client.post(reverse("member_edit", args=[membership.pk]), {"role": "viewer"})
    membership.refresh_from_db()
    assert membership.role == Role.VIEWER

    client.post(reverse("member_edit", args=[membership.pk]), {"role": "viewer", "remove": "1"})
    assert not Membership.objects.filter(pk=membership.pk).exists()


def test_the_last_owner_cannot_be_demoted_or_removed(client, owner_a):
    client.force_login(owner_a)
    membership = Membership.objects.get(user=owner_a)

    response = client.post(reverse("member_edit", args=[membership.pk]), {"role": "viewer"})
    assert response.status_code == 400
    assert "at least one owner" in response.content.decode()
    client.post(reverse("member_edit", args=[membership.pk]), {"role": "owner", "remove": "1"})
    membership.refresh_from_db()
    assert membership.role == Role.OWNER


def test_switch_between_own_organisations(client, owner_a):
    other = Organisation.objects.create(name="Gamma Group", slug="gamma")
    Membership.objects.create(organisation=other, user=owner_a, role=Role.VIEWER)
    client.force_login(owner_a)

    client.post(reverse("organisation_switch"), {"organisation": other.pk})

    assert "Gamma Group" in client.get(reverse("home")).content.decode()


def test_login_logout_and_password_reset_pages(client, org_a):
    make_member(org_a, "dana")
    response = client.post(reverse("login"), {"username": "dana", "password": "pw-for-tests-1"})
    assert response.status_code == 302 and response.url == "/"
    assert "Alpha Advisory" in client.get("/").content.decode()
    assert client.post(reverse("logout")).status_code == 302
    assert client.get("/").status_code == 302

    bad = client.post(reverse("login"), {"username": "dana", "password": "wrong"})
    assert bad.status_code == 200 and "correct username and password" in bad.content.decode()

    client.post(reverse("password_reset"), {"email": "dana@example.com"})
    assert len(mail.outbox) == 1 and "/accounts/reset/" in mail.outbox[0].body


def test_owner_edits_quote_terms_and_bad_validity_is_refused(client, owner_a, org_a):
    client.force_login(owner_a)

    bad = client.post(reverse("quote_terms"), {"quote_terms": "Net 30", "quote_validity_days": 0})
    assert bad.status_code == 400 and "Between 1 and 365 days." in bad.content.decode()
    assert "Net 30" in bad.content.decode()

    client.post(
        reverse("quote_terms"),
        {"quote_terms": "Net 30 days.\n\nPrices in EUR.", "quote_validity_days": 14},
    )
    org_a.refresh_from_db()
    assert org_a.quote_terms_list == ["Net 30 days.", "Prices in EUR."]
    assert org_a.quote_validity_days == 14


def test_only_owners_edit_quote_terms(client, consultant_a):
    client.force_login(consultant_a)
    assert client.get(reverse("quote_terms")).status_code == 403


def test_the_organisation_terms_refuse_a_second_payment_schedule(client, owner_a, org_a):
    # Payment milestones are entered once, on each plan's quote: a general term stating a
    # schedule would print a second one (the quote's Terms §5 "40 / 50 / 10 %" beside it).
    client.force_login(owner_a)
    terms = "Prices in EUR.\nPayment: 40 % on order, 50 % on delivery, 10 % on acceptance."
    bad = client.post(reverse("quote_terms"), {"quote_terms": terms, "quote_validity_days": 30})
    text = bad.content.decode()
    assert bad.status_code == 400 and "states payment" in text and "quote page" in text
    org_a.refresh_from_db()
    assert not any("40 %" in t for t in org_a.quote_terms_list)

"""Drives a live Ferry server with supabase-py's auth client through Sign in with Apple and the mailed codes.

Usage: python3 supabase_py_accounts_check.py BASE_URL ANON_KEY SERVICE_ROLE_KEY APPLE_STAND_IN_URL MAILDIR

The server runs with mail on (an aiosmtpd sink writing each message into MAILDIR) and Sign in with Apple pointed at
a stand-in for Apple's keys, which also mints tokens and notices (POST /mint/id-token, /mint/notice). Prints one
line per step and exits non-zero on the first surprise.
"""
import email
import email.policy
import os
import re
import sys
import time
import uuid

import httpx
from supabase_auth.errors import AuthApiError

from checks import check, gotrue as gotrue_client

base, anon_key, service_key, apple_base, maildir = sys.argv[1:6]
http = httpx.Client(timeout=60)


def gotrue(bearer=None):
    return gotrue_client(base, anon_key, bearer)


def refused(call, step, status=None, code=None):
    try:
        call()
    except AuthApiError as error:
        check((status is None or error.status == status) and (code is None or error.code == code),
              f"{step} ({error.status} {error.code})")
        return
    check(False, step)


def mails_to(address):
    """The messages the sink received for `address`, oldest first, as (subject, body)."""
    found = []
    for name in sorted(os.listdir(maildir), key=lambda n: int(n.split("-", 1)[0]) if n.split("-", 1)[0].isdigit() else 0):
        if not name.endswith(".eml"):
            continue
        with open(os.path.join(maildir, name), "rb") as handle:
            message = email.message_from_bytes(handle.read(), policy=email.policy.default)
        if address.lower() in str(message["To"]).lower():
            found.append((str(message["Subject"]), message.get_body(("plain",)).get_content()))
    return found


def next_code(address, seen):
    """Waits (at most 20 s) for mail number `seen + 1` to `address` and returns its 6-digit code."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = mails_to(address)
        if len(found) > seen:
            match = re.search(r"\b(\d{6})\b", found[seen][1])
            check(match is not None, f"the mail to {address} carries a 6-digit code")
            check("/auth/v1/verify?token=" in found[seen][1], f"the mail to {address} carries a link")
            return match.group(1)
        time.sleep(0.05)
    check(False, f"a mail reached {address}")


def mint(kind, **fields):
    reply = http.post(f"{apple_base}/mint/{kind}", json=fields)
    reply.raise_for_status()
    return reply.json()["token"]


# Sign in with Apple.
client = gotrue()
subject = f"001234.{uuid.uuid4().hex}.0987"
apple_email = f"{uuid.uuid4().hex[:10]}@privaterelay.appleid.com"
raw_nonce = uuid.uuid4().hex
first = client.sign_in_with_id_token({"provider": "apple", "token": mint("id-token", sub=subject, email=apple_email, nonce=raw_nonce),
                                      "nonce": raw_nonce})
check(first.session is not None and first.user.email == apple_email, "sign_in_with_id_token for Apple creates the user")
again = client.sign_in_with_id_token({"provider": "apple", "token": mint("id-token", sub=subject, nonce="second"), "nonce": "second"})
check(again.user.id == first.user.id, "again without an e-mail: the same user")
for step, fields, nonce in [
    ("a token signed by another key is refused", {"forged": True, "nonce": "n"}, "n"),
    ("a token for another aud is refused", {"aud": "com.other.app", "nonce": "n"}, "n"),
    ("a wrong nonce is refused", {"nonce": "n"}, "not-n"),
    ("an expired token is refused", {"expired": True, "nonce": "n"}, "n"),
]:
    token = mint("id-token", sub=subject, **fields)
    refused(lambda: gotrue().sign_in_with_id_token({"provider": "apple", "token": token, "nonce": nonce}), step, status=400)

# A signed consent-revoked notice ends the session; a forged one changes nothing.
session = again.session
forged = http.post(f"{base}/auth/v1/apple/notifications", json={"payload": mint("notice", type="consent-revoked", sub=subject, forged=True)})
check(forged.status_code == 400, "a forged notice is refused")
refreshed = client.refresh_session(session.refresh_token)
check(refreshed.session is not None, "after a forged notice refresh_session still works")
notice = http.post(f"{base}/auth/v1/apple/notifications", json={"payload": mint("notice", type="consent-revoked", sub=subject)})
check(notice.status_code == 200, "a signed consent-revoked notice is accepted")
refused(lambda: client.refresh_session(refreshed.session.refresh_token), "after consent-revoked the next refresh_session fails")

# Sign-up waits for the mailed code.
address = f"py-mail-{uuid.uuid4().hex[:8]}@example.com"
signed_up = client.sign_up({"email": address, "password": "correct horse 1"})
check(signed_up.session is None and signed_up.user.email == address, "sign_up returns no session until confirmed")
check(signed_up.user.confirmation_sent_at is not None, "sign_up says when the confirmation was mailed")
refused(lambda: gotrue().sign_in_with_password({"email": address, "password": "correct horse 1"}),
        "password sign-in before confirmation is email_not_confirmed", code="email_not_confirmed")
code = next_code(address, 0)
refused(lambda: gotrue().verify_otp({"email": address, "token": "000000" if code != "000000" else "111111", "type": "signup"}),
        "a wrong code is refused", status=403, code="otp_expired")
confirmed = client.verify_otp({"email": address, "token": code, "type": "signup"})
check(confirmed.session is not None and confirmed.user.email_confirmed_at is not None, "verify_otp(type=signup) with the mailed code signs in")
refused(lambda: gotrue().verify_otp({"email": address, "token": code, "type": "signup"}), "a code works once", status=403)
check(gotrue().sign_in_with_password({"email": address, "password": "correct horse 1"}).session is not None, "the password signs in once confirmed")

# Passwordless sign-in.
passwordless = gotrue()
passwordless.sign_in_with_otp({"email": address, "options": {"should_create_user": False}})
otp_session = passwordless.verify_otp({"email": address, "token": next_code(address, 1), "type": "email"})
check(otp_session.session is not None and otp_session.user.email == address, "sign_in_with_otp then verify_otp(type=email) signs in")

# Recovery.
recovering = gotrue()
recovering.reset_password_for_email(address)
recovered = recovering.verify_otp({"email": address, "token": next_code(address, 2), "type": "recovery"})
check(recovered.session is not None, "reset_password_for_email then verify_otp(type=recovery) signs in")
recovering.update_user({"password": "new horse 2"})
check(gotrue().sign_in_with_password({"email": address, "password": "new horse 2"}).session is not None, "the new password signs in")
refused(lambda: gotrue().sign_in_with_password({"email": address, "password": "correct horse 1"}), "the old password does not", status=400)

# Unknown addresses answer the same and get nothing.
unknown = f"py-nobody-{uuid.uuid4().hex[:8]}@example.com"
gotrue().reset_password_for_email(unknown)
gotrue().sign_in_with_otp({"email": unknown, "options": {"should_create_user": False}})
time.sleep(1)
check(mails_to(unknown) == [], "recovery and OTP for an unknown address answer the same and send nothing")

# The admin API with the service-role key.
admin = gotrue(service_key).admin
made = admin.create_user({"email": f"py-admin-{uuid.uuid4().hex[:8]}@example.com", "password": "correct horse 3", "email_confirm": True}).user
check(any(user.id == made.id for user in admin.list_users(page=1, per_page=1000)), "auth.admin.create_user and list_users")
link = admin.generate_link({"type": "magiclink", "email": made.email})
check(re.fullmatch(r"\d{6}", link.properties.email_otp) is not None and "/auth/v1/verify?token=" in link.properties.action_link,
      "auth.admin.generate_link returns a code and a link")
check(gotrue().verify_otp({"email": made.email, "token": link.properties.email_otp, "type": "magiclink"}).session is not None,
      "the generated code signs in")
check(mails_to(made.email) == [], "generate_link mails nothing")
user_token = gotrue().sign_in_with_password({"email": made.email, "password": "correct horse 3"}).session.access_token
refused(lambda: gotrue(user_token).admin.list_users(), "a user's token is refused by the admin API", status=403)
admin.delete_user(made.id)
refused(lambda: admin.get_user_by_id(made.id), "auth.admin.delete_user deletes the user", status=404)
print("ok accounts", flush=True)

"""Drives a live Ferry server with supabase-py's auth client (supabase_auth), unchanged.

Usage: python3 supabase_py_check.py BASE_URL ANON_KEY. Prints one line per step and exits non-zero on the
first surprise, so the Swift test that runs it can show exactly which step broke compatibility.
"""
import sys
import uuid

from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from checks import check, gotrue as gotrue_client

base, key = sys.argv[1], sys.argv[2]
client = gotrue_client(base, key)

email = f"py-{uuid.uuid4().hex[:8]}@example.com"
signed_up = client.sign_up({"email": email, "password": "correct horse 1", "options": {"data": {"first_name": "Ada"}}})
check(signed_up.session is not None and signed_up.user.email == email, "sign_up returns a session")
check(signed_up.user.user_metadata == {"first_name": "Ada"}, "sign_up stores data as user_metadata")

signed_in = client.sign_in_with_password({"email": email, "password": "correct horse 1"})
check(signed_in.session.expires_in == 3600, "sign_in_with_password returns a session")
check(client.get_user().user.id == signed_in.user.id, "get_user returns the same user")

# supabase-py reads the token's claims with pydantic, which refuses a fractional exp or iat: whole seconds, as GoTrue's.
claims = client.get_claims()["claims"]
check(claims["sub"] == signed_in.user.id and isinstance(claims["exp"], int) and isinstance(claims["iat"], int),
      "get_claims reads the access token (whole-second exp and iat)")
restored = gotrue_client(base, key)
restored.set_session(signed_in.session.access_token, signed_in.session.refresh_token)
check(restored.get_user().user.id == signed_in.user.id, "set_session restores a saved session")

old_refresh = signed_in.session.refresh_token
refreshed = client.refresh_session()
check(refreshed.session.refresh_token != old_refresh, "refresh_session rotates the refresh token")

updated = client.update_user({"data": {"city": "Leeds"}})
check(updated.user.user_metadata == {"first_name": "Ada", "city": "Leeds"}, "update_user merges data")

try:
    client.sign_in_with_password({"email": email, "password": "wrong horse 1"})
    check(False, "a wrong password is refused")
except AuthApiError as error:
    check(error.status == 400 and error.code == "invalid_credentials", "a wrong password is invalid_credentials")

try:
    client.sign_up({"email": f"weak-{email}", "password": "short"})
    check(False, "a weak password is refused")
except AuthWeakPasswordError as error:
    check("length" in error.reasons, "a weak password is AuthWeakPasswordError with reasons")

client.sign_out()
check(client.get_session() is None, "sign_out clears the session")

try:
    client.sign_in_anonymously()
    check(False, "sign_in_anonymously is refused")
except AuthApiError as error:
    check(error.status == 422 and error.code == "anonymous_provider_disabled", "sign_in_anonymously is anonymous_provider_disabled")

# The admin API (auth.admin), with the service-role key: the third argument.
if len(sys.argv) > 3:
    service_key = sys.argv[3]

    def gotrue(bearer):
        return gotrue_client(base, key, bearer, persist_session=False)

    admin = gotrue(service_key).admin
    admin_email = f"py-admin-{uuid.uuid4().hex[:8]}@example.com"
    made = admin.create_user({"email": admin_email, "password": "correct horse 2", "email_confirm": True,
                              "user_metadata": {"plan": "pro"}}).user
    check(made.email == admin_email and made.user_metadata == {"plan": "pro"}, "admin.create_user with email_confirm")
    check(any(user.id == made.id for user in admin.list_users(page=1, per_page=1000)), "admin.list_users lists the new user")
    check(admin.get_user_by_id(made.id).user.email == admin_email, "admin.get_user_by_id")

    member = gotrue(key)
    session = member.sign_in_with_password({"email": admin_email, "password": "correct horse 2"}).session
    check(session is not None, "the created user signs in at once")

    try:
        gotrue(session.access_token).admin.list_users()
        check(False, "a user's token is refused by the admin API")
    except AuthApiError as error:
        check(error.status == 403 and error.code == "not_admin", "a user's token is refused by the admin API (403 not_admin)")

    banned = admin.update_user_by_id(made.id, {"ban_duration": "24h"}).user
    check(banned.banned_until is not None, "admin.update_user_by_id bans for 24h")
    try:
        member.refresh_session(session.refresh_token)
        check(False, "a ban ends the user's sessions")
    except AuthApiError as error:
        check(error.status in (400, 401, 403), "a ban ends the user's sessions (the refresh fails)")
    try:
        member.sign_in_with_password({"email": admin_email, "password": "correct horse 2"})
        check(False, "a banned user cannot sign in")
    except AuthApiError as error:
        check(error.code == "user_banned", "a banned user cannot sign in (user_banned)")
    admin.update_user_by_id(made.id, {"ban_duration": "none", "password": "correct horse 3", "user_metadata": {"city": "Leeds"}})
    again = member.sign_in_with_password({"email": admin_email, "password": "correct horse 3"})
    check(again.user.user_metadata == {"plan": "pro", "city": "Leeds"}, "the ban lifted, the new password signs in, metadata merged")

    admin.delete_user(made.id)
    try:
        admin.get_user_by_id(made.id)
        check(False, "admin.delete_user deletes the user")
    except AuthApiError as error:
        check(error.status == 404, "admin.delete_user deletes the user (then 404)")
    try:
        member.sign_in_with_password({"email": admin_email, "password": "correct horse 3"})
        check(False, "a deleted user cannot sign in")
    except AuthApiError as error:
        check(error.code == "invalid_credentials", "a deleted user cannot sign in")
    print("ok admin", flush=True)

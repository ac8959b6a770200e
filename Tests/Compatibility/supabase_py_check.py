"""Drives a live Ferry server with supabase-py's auth client (supabase_auth), unchanged.

Usage: python3 supabase_py_check.py BASE_URL ANON_KEY. Prints one line per step and exits non-zero on the
first surprise, so the Swift test that runs it can show exactly which step broke compatibility.
"""
import sys
import uuid

import httpx
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

base, key = sys.argv[1], sys.argv[2]
client = SyncGoTrueClient(
    url=f"{base}/auth/v1",
    headers={"apikey": key, "Authorization": f"Bearer {key}"},
    auto_refresh_token=False,
    persist_session=True,
    # httpx's default 5 s read timeout is shorter than a loaded 2-core CI machine sometimes needs while the
    # rest of the suite runs beside this script; a real timeout still fails the check, just later.
    http_client=httpx.Client(timeout=60, follow_redirects=True),
)


def check(condition, step):
    print(("ok " if condition else "FAIL ") + step, flush=True)
    if not condition:
        sys.exit(1)


email = f"py-{uuid.uuid4().hex[:8]}@example.com"
signed_up = client.sign_up({"email": email, "password": "correct horse 1", "options": {"data": {"first_name": "Ada"}}})
check(signed_up.session is not None and signed_up.user.email == email, "sign_up returns a session")
check(signed_up.user.user_metadata == {"first_name": "Ada"}, "sign_up stores data as user_metadata")

signed_in = client.sign_in_with_password({"email": email, "password": "correct horse 1"})
check(signed_in.session.expires_in == 3600, "sign_in_with_password returns a session")
check(client.get_user().user.id == signed_in.user.id, "get_user returns the same user")

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

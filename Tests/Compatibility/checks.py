"""What the compatibility scripts share: how a step is reported, and a supabase-py auth client for a Ferry server."""
import sys

import httpx


def check(condition, step):
    """Prints `ok STEP` or `FAIL STEP`; a failure ends the script, so the Swift test shows the step that broke."""
    print(("ok " if condition else "FAIL ") + step, flush=True)
    if not condition:
        sys.exit(1)


def gotrue(base, api_key, bearer=None, persist_session=True):
    """supabase-py's auth client for `base`, with `api_key` as apikey and `bearer` (default the key) as the token."""
    from supabase_auth import SyncGoTrueClient

    return SyncGoTrueClient(
        url=f"{base}/auth/v1",
        headers={"apikey": api_key, "Authorization": f"Bearer {bearer or api_key}"},
        auto_refresh_token=False,
        persist_session=persist_session,
        # httpx's default 5 s read timeout is shorter than a loaded 2-core CI machine sometimes needs while the
        # rest of the suite runs beside the script; a real timeout still fails the check, just later.
        http_client=httpx.Client(timeout=60, follow_redirects=True),
    )

"""Schemathesis hooks for scripts/fuzz.sh: steer part of the generated pushes past the first gate.

A push is accepted only from the device the session is bound to, so a random `deviceId` always answers
403 `device_mismatch` and the merge code behind it is never reached. For each schema-valid push body this
names the session's device (FERRY_FUZZ_DEVICE_ID) and, for every other mutation, the user's personal space
(FERRY_FUZZ_USER_ID) and one of the served collections (FERRY_FUZZ_COLLECTIONS), so the per-mutation checks
(fields, clocks, types, sizes) and the storage behind them get exercised too. Bodies Schemathesis made
invalid on purpose stay as they are: their point is the rejection.
"""
import os

import schemathesis
from schemathesis.core.parameters import ParameterLocation

DEVICE_ID = os.environ.get("FERRY_FUZZ_DEVICE_ID")
USER_ID = os.environ.get("FERRY_FUZZ_USER_ID")
COLLECTIONS = [name for name in os.environ.get("FERRY_FUZZ_COLLECTIONS", "").split(",") if name]


@schemathesis.hook
def map_case(context, case):
    if DEVICE_ID is None or case.operation.path != "/sync/v1/push" or case.operation.method.upper() != "POST":
        return case
    body = case.body
    if not isinstance(body, dict) or not isinstance(body.get("deviceId"), str):
        return case
    meta = getattr(case, "meta", None)
    if meta is not None and meta.is_negative_at(ParameterLocation.BODY):
        return case
    body["deviceId"] = DEVICE_ID
    mutations = body.get("mutations")
    if isinstance(mutations, list):
        for index, mutation in enumerate(mutations):
            if index % 2 == 1 and isinstance(mutation, dict):
                if USER_ID:
                    mutation["space"] = USER_ID
                if COLLECTIONS:
                    mutation["collection"] = COLLECTIONS[index // 2 % len(COLLECTIONS)]
    case.body = body
    return case

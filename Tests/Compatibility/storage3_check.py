"""Drives Ferry's /storage/v1 with supabase-py's storage client (storage3), unchanged, and a TUS upload by hand.

Usage: python3 storage3_check.py BASE_URL ANON_KEY. Signs up two accounts with supabase_auth, then uploads,
downloads, signs, lists and removes in the schema's `sermon-audio` bucket as the first, checks that the second is
refused, and sends a TUS upload in two halves with a HEAD between them. Prints one line per step and exits non-zero
on the first surprise.
"""
import base64
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

import httpx
from storage3 import SyncStorageClient
from storage3.exceptions import StorageApiError
from supabase_auth import SyncGoTrueClient

from checks import check

base, key = sys.argv[1], sys.argv[2]


def account(name):
    auth = SyncGoTrueClient(url=f"{base}/auth/v1", headers={"apikey": key}, auto_refresh_token=False,
                            http_client=httpx.Client(timeout=60))
    session = auth.sign_up({"email": f"{name}-{uuid.uuid4().hex[:8]}@example.com", "password": "correct horse 1"}).session
    storage = SyncStorageClient(f"{base}/storage/v1", {"apikey": key, "Authorization": f"Bearer {session.access_token}"},
                                http_client=httpx.Client(timeout=60))
    return session, storage


def refused(call, status, step):
    try:
        call()
        check(False, step)
    except StorageApiError as error:
        check(str(error.status) == str(status), f"{step} ({error.status} {error.code})")


def raw(method, url, data=None, headers=None):
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


owner, storage = account("owner")
_, stranger = account("stranger")
bucket = storage.from_("sermon-audio")
user = owner.user.id
path = f"{user}/sermons/grace.m4a"
audio = os.urandom(300_000)

check(any(b.name == "sermon-audio" and not b.public for b in storage.list_buckets()), "list_buckets shows the schema's bucket")
uploaded = bucket.upload(path, audio, {"content-type": "audio/mp4"})
check(uploaded.full_path == f"sermon-audio/{path}", "upload (multipart) returns the key")
check(bucket.download(path) == audio, "download returns the bytes")
refused(lambda: bucket.upload(path, b"again", {"content-type": "audio/mp4"}), 409, "a second upload without x-upsert is refused")
replacement = os.urandom(200_000)
bucket.upload(path, replacement, {"content-type": "audio/mp4", "upsert": "true"})
check(bucket.download(path) == replacement, "x-upsert: true replaces the object")
refused(lambda: bucket.upload(f"{user}/notes.txt", b"text", {"content-type": "text/plain"}), 415, "a type the bucket refuses")
refused(lambda: bucket.upload("grace.m4a", audio, {"content-type": "audio/mp4"}), 400, "a path that does not start with a space id")
# Not served (docs/blobs.md), and refused in Storage's shape, which storage3 reads.
refused(lambda: bucket.move(path, f"{user}/moved.m4a"), 404, "move is not served")

signed = bucket.create_signed_url(path, 60)
status, _, body = raw("GET", signed["signedURL"])
check(status == 200 and body == replacement, "create_signed_url gives a signedURL that downloads without a session")
status, _, _ = raw("GET", signed["signedURL"].replace("token=", "token=x"))
check(status == 400, "a tampered signed URL is refused")
several = bucket.create_signed_urls([path, f"{user}/missing.m4a"], 60)
check(several[0]["signedURL"] is not None and several[1]["error"] is not None, "create_signed_urls signs what exists")

second = f"{user}/sermons/second.m4a"
upload_url = bucket.create_signed_upload_url(second)
bucket.upload_to_signed_url(second, upload_url["token"], audio, {"content-type": "audio/mp4"})
check(bucket.download(second) == audio, "a signed upload URL stores the object")

names = [entry["name"] for entry in bucket.list(f"{user}/sermons")]
check(names == ["grace.m4a", "second.m4a"], f"list shows the folder's objects ({names})")
check(bucket.list(f"{user}/sermons", {"limit": 1, "offset": 1})[0]["name"] == "second.m4a", "list honours limit and offset")
check(bucket.list(f"{user}/sermons", {"sortBy": {"column": "name", "order": "desc"}})[0]["name"] == "second.m4a", "list sorts")
folders = bucket.list(user)
check(len(folders) == 1 and folders[0]["name"] == "sermons" and folders[0]["id"] is None, "list shows folders with a null id")
meta = bucket.list(f"{user}/sermons")[0]["metadata"]
check(meta["size"] == len(replacement) and meta["mimetype"] == "audio/mp4", "list carries size and mimetype")
check(bucket.exists(path) and not bucket.exists(f"{user}/nothing.m4a"), "exists tells objects apart from missing ones")

other = stranger.from_("sermon-audio")
refused(lambda: other.download(path), 404, "another account cannot download")
refused(lambda: other.upload(f"{user}/intruder.m4a", audio, {"content-type": "audio/mp4"}), 404, "another account cannot upload")
check(other.list(user) == [], "another account lists nothing in the space")
check(other.remove([path]) == [] and bucket.exists(path), "another account cannot remove")

removed = bucket.remove([path, second])
check(len(removed) == 2, "remove deletes the objects")
refused(lambda: bucket.download(path), 404, "a removed object is gone")

# TUS: two halves with a HEAD between them.
tus = os.urandom(700_000)
auth = {"apikey": key, "Authorization": f"Bearer {owner.access_token}", "Tus-Resumable": "1.0.0"}
name = f"{user}/sermons/tus.m4a"
metadata = ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in
                    {"bucketName": "sermon-audio", "objectName": name, "contentType": "audio/mp4"}.items())
status, headers, _ = raw("POST", f"{base}/storage/v1/upload/resumable",
                         headers={**auth, "Upload-Length": str(len(tus)), "Upload-Metadata": metadata})
# Without --public-url the Location is a path, which TUS clients resolve against the URL they posted to.
location = headers.get("Location") and urllib.parse.urljoin(f"{base}/storage/v1/upload/resumable", headers.get("Location"))
check(status == 201 and location, "TUS POST creates an upload")
half = len(tus) // 2
status, headers, _ = raw("PATCH", location, tus[:half],
                         {**auth, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"})
check(status == 204 and headers.get("Upload-Offset") == str(half), "TUS PATCH sends the first half")
status, headers, _ = raw("HEAD", location, headers=auth)
check(status == 200 and headers.get("Upload-Offset") == str(half) and headers.get("Upload-Length") == str(len(tus)),
      "TUS HEAD says where the upload stands")
status, _, _ = raw("HEAD", location, headers={**auth, "Tus-Resumable": "0.2.2"})
check(status == 412, "TUS without version 1.0.0 is refused")
status, headers, _ = raw("PATCH", location, tus[half:],
                         {**auth, "Content-Type": "application/offset+octet-stream", "Upload-Offset": str(half)})
check(status == 204 and headers.get("Upload-Offset") == str(len(tus)), "TUS PATCH sends the second half")
check(bucket.download(name) == tus, "the TUS upload is stored intact")
print("ok storage3", flush=True)

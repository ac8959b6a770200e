"""The sermon app's backend functions, rewritten against Ferry's /rest/v1 with supabase-py's PostgREST client.

The app (TabletNotes, schema: Examples/tabletnotes.yaml) used to sync through three Netlify functions that called
supabase-js: create-sermon, update-sermon and get-sermons. Here they are in Python with the same calls:
`from_('sermons').insert(...).select()`, `update(...).eq('id', ...)`, `delete().eq('sermon_id', ...)`,
`upsert(..., on_conflict='sermon_id')` and one embedded select ordered by date. What changed is only what Ferry
already does:

- no `user_id` column and no `.eq('user_id', ...)`: a function acts with the user's access token, and the user's
  rows are those of the spaces they are a member of (a row inserted without `_space` goes to their personal space,
  whose id is the user's id);
- no `local_id`: the app's own id is the record's `id`, and it never changes;
- every write is a sync write: the app's other devices pull it at their next sync.

A fourth function, the transcription worker, runs on a server with the service-role key: it writes the transcript
into the user's space (`_space` is the user's id) and sets the sermon's `transcription_status`.

Run it against a server started with `--schema Examples/tabletnotes.yaml` (`ferry serve --print-keys` prints both
keys):

    pip install 'postgrest==2.34.1' 'supabase_auth==2.34.1'
    python3 Examples/tabletnotes_backend.py http://127.0.0.1:8080 ANON_KEY SERVICE_ROLE_KEY

It signs up a throwaway user, runs each function once with a payload shaped like the app's, and prints what it did.
"""
import json
import sys
import uuid

from postgrest import SyncPostgrestClient
from supabase_auth import SyncGoTrueClient


def rest(base_url, api_key, bearer):
    """A PostgREST client as supabase-py's create_client builds it: the API key, and who is asking as the bearer."""
    return SyncPostgrestClient(f"{base_url}/rest/v1", headers={"apikey": api_key, "Authorization": f"Bearer {bearer}"})


# create-sermon: the app pushes a new sermon with its notes, transcript and summary.
def create_sermon(supabase, body):
    sermon_data = {
        "id": body["id"],  # was local_id
        "title": body["title"],
        "date": body["date"],
        "service_type": body.get("serviceType"),
        "speaker": body.get("speaker"),
        "duration": body.get("duration"),
        "transcription_status": body.get("transcriptionStatus"),
        "summary_status": body.get("summaryStatus"),
        "is_archived": body.get("isArchived", False),
    }
    sermon = supabase.from_("sermons").insert(sermon_data).select().execute().data[0]

    if body.get("notes"):
        notes_data = [
            {"id": note["id"], "sermon_id": sermon["id"], "text": note["text"], "timestamp": note.get("timestamp")}
            for note in body["notes"]
        ]
        supabase.from_("notes").insert(notes_data).execute()

    if body.get("transcript"):
        transcript = body["transcript"]
        transcript_data = {
            "id": transcript["id"],
            "sermon_id": sermon["id"],
            "text": transcript.get("text"),
            "segments": transcript.get("segments"),
            "status": transcript.get("status"),
        }
        supabase.from_("transcripts").insert(transcript_data).execute()

    if body.get("summary"):
        summary = body["summary"]
        summary_data = {
            "id": summary["id"],
            "sermon_id": sermon["id"],
            "title": summary.get("title"),
            "text": summary.get("text"),
            "type": summary.get("type"),
            "status": summary.get("status"),
        }
        supabase.from_("summaries").insert(summary_data).execute()

    return sermon


# update-sermon: the app pushes an edited sermon; notes are replaced, transcript and summary upserted.
def update_sermon(supabase, body):
    sermon_id = body["id"]  # was remoteId: the server's id and the app's are one
    update_data = {
        "title": body["title"],
        "service_type": body.get("serviceType"),
        "transcription_status": body.get("transcriptionStatus"),
        "summary_status": body.get("summaryStatus"),
        "is_archived": body.get("isArchived", False),
    }
    supabase.from_("sermons").update(update_data).eq("id", sermon_id).execute()

    supabase.from_("notes").delete().eq("sermon_id", sermon_id).execute()
    if body.get("notes"):
        notes_data = [
            {"id": note["id"], "sermon_id": sermon_id, "text": note["text"], "timestamp": note.get("timestamp")}
            for note in body["notes"]
        ]
        supabase.from_("notes").insert(notes_data).execute()  # a note deleted above comes back under its id

    if body.get("transcript"):
        transcript = body["transcript"]
        transcript_data = {
            "sermon_id": sermon_id,
            "text": transcript.get("text"),
            "segments": transcript.get("segments"),
            "status": transcript.get("status"),
        }
        supabase.from_("transcripts").upsert(transcript_data, on_conflict="sermon_id").execute()

    if body.get("summary"):
        summary = body["summary"]
        summary_data = {
            "sermon_id": sermon_id,
            "title": summary.get("title"),
            "text": summary.get("text"),
            "type": summary.get("type"),
            "status": summary.get("status"),
        }
        supabase.from_("summaries").upsert(summary_data, on_conflict="sermon_id").execute()


# get-sermons: the app pulls every sermon of the user with its notes, transcript and summary.
def get_sermons(supabase):
    return (
        supabase.from_("sermons")
        .select(
            "id, title, date, service_type, speaker, transcription_status, summary_status, is_archived, "
            "notes (id, text, timestamp), transcripts (id, text, segments, status), "
            "summaries (id, title, text, type, status)"
        )
        .order("date", desc=True)
        .execute()
        .data
    )


# The transcription worker: a backend with the service-role key, which reaches every space. Each row it inserts
# names its space; a user's personal space has the user's id.
def store_transcription(service, user_id, sermon_id, text, segments):
    service.from_("transcripts").upsert(
        {"_space": user_id, "sermon_id": sermon_id, "text": text, "segments": segments, "status": "complete"},
        on_conflict="sermon_id",
    ).execute()
    service.from_("sermons").update({"transcription_status": "complete"}).eq("id", sermon_id).execute()


def show(step, value):
    print(f"{step}:\n{json.dumps(value, indent=2)}", flush=True)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: python3 Examples/tabletnotes_backend.py BASE_URL ANON_KEY SERVICE_ROLE_KEY")
    base_url, anon_key, service_role_key = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]

    # A throwaway user, signed up as the app does (supabase_auth is supabase-py's auth client).
    auth = SyncGoTrueClient(url=f"{base_url}/auth/v1", headers={"apikey": anon_key}, auto_refresh_token=False)
    email = f"pastor-{uuid.uuid4().hex[:8]}@example.com"
    session = auth.sign_up({"email": email, "password": "correct horse 1"}).session
    user_id = session.user.id
    print(f"signed up {email}: user (and personal space) {user_id}")
    supabase = rest(base_url, anon_key, session.access_token)
    service = rest(base_url, service_role_key, service_role_key)

    # The app's payload (its ids are made on the device).
    sermon_id, first_note, transcript_id, summary_id = (str(uuid.uuid4()) for _ in range(4))
    body = {
        "id": sermon_id,
        "title": "Sunday Service",
        "date": "2025-11-06T10:00:00Z",
        "serviceType": "Sunday Service",
        "speaker": "Pastor John",
        "duration": 2460,
        "transcriptionStatus": "processing",
        "summaryStatus": "processing",
        "isArchived": False,
        "notes": [{"id": first_note, "text": "Key point about scripture", "timestamp": 120.5}],
        "transcript": {"id": transcript_id, "text": None, "segments": None, "status": "processing"},
        "summary": {"id": summary_id, "title": None, "text": None, "type": "devotional", "status": "pending"},
    }

    sermon = create_sermon(supabase, body)
    print(f"create-sermon: inserted sermon {sermon['id']} in space {sermon['_space']}, 1 note, a transcript and a summary")

    body["title"] = "Sunday Service: Grace"
    body["summaryStatus"] = "complete"
    body["notes"].append({"id": str(uuid.uuid4()), "text": "Second point", "timestamp": 610.0})
    body["summary"] = {"title": "Grace", "text": "Grace is a gift.", "type": "devotional", "status": "complete"}
    update_sermon(supabase, body)
    print("update-sermon: updated the sermon, replaced its notes with 2, upserted the summary")

    segments = [{"start": 0.0, "end": 4.2, "text": "Good morning."}, {"start": 4.2, "end": 9.0, "text": "Grace."}]
    store_transcription(service, user_id, sermon_id, "Good morning. Grace.", segments)
    print(f"transcription worker (service role): wrote the transcript into space {user_id}, transcription_status complete")

    sermons = get_sermons(supabase)
    show("get-sermons", sermons)
    got = sermons[0]
    assert len(sermons) == 1 and got["id"] == sermon_id and got["title"] == "Sunday Service: Grace"
    assert sorted(note["text"] for note in got["notes"]) == ["Key point about scripture", "Second point"]
    assert got["transcription_status"] == "complete" and got["transcripts"]["id"] == transcript_id
    assert got["transcripts"]["segments"] == segments and got["summaries"]["status"] == "complete"
    print("ok: the user reads back what the functions and the worker wrote")


if __name__ == "__main__":
    main()

"""Drives Ferry's /rest/v1 with supabase-py's PostgREST client (postgrest), unchanged.

Usage: python3 postgrest_check.py BASE_URL ANON_KEY SERVICE_ROLE_KEY, against a server started with
`--schema Examples/tabletnotes.yaml --schema Tests/Compatibility/rest_schema.yaml`. Signs up two accounts with
supabase_auth; as the first, writes and reads sermons with their notes, transcripts and summaries the way the sermon
app's backend did (insert, bulk insert, upsert on one- and two-column unique keys, update, delete, embedded selects,
counts, single rows, filters); checks that the second account and the anon key alone reach none of it; writes into
the first account's space with the service-role key, as a transcription backend would; and checks PostgREST's error
codes. Prints one line per step and exits non-zero on the first surprise.
"""
import sys
import uuid
from datetime import datetime

import httpx
from postgrest import APIError, ReturnMethod, SyncPostgrestClient
from supabase_auth import SyncGoTrueClient

from checks import check

base, anon, service = sys.argv[1], sys.argv[2], sys.argv[3]

# postgrest's APIError carries the body's code but not the HTTP status, so every client records the last response.
last = {"status": None, "headers": {}}


def record(response):
    last["status"] = response.status_code
    last["headers"] = response.headers


def unexpected(kind, error, trace):
    # An exception no step expected (an APIError out of a plain read, say) still ends with a FAIL line.
    print(f"FAIL unexpected {kind.__name__} after a {last['status']} response: {error}", flush=True)
    sys.__excepthook__(kind, error, trace)


sys.excepthook = unexpected


def rest(token, key=anon):
    # As supabase-py's create_client builds it: the API key and the bearer, no Accept or Content-Type of our own.
    # httpx's default 5 s read timeout is shorter than a loaded 2-core CI machine sometimes needs.
    return SyncPostgrestClient(f"{base}/rest/v1", headers={"apikey": key, "Authorization": f"Bearer {token}"},
                               http_client=httpx.Client(timeout=60, event_hooks={"response": [record]}))


def account(name):
    auth = SyncGoTrueClient(url=f"{base}/auth/v1", headers={"apikey": anon, "Authorization": f"Bearer {anon}"},
                            auto_refresh_token=False, http_client=httpx.Client(timeout=60))
    session = auth.sign_up({"email": f"{name}-{uuid.uuid4().hex[:8]}@example.com", "password": "correct horse 1"}).session
    check(session is not None, f"user {name} signs up with a session")
    return session.user.id, session.access_token, rest(session.access_token)


def refused(call, codes, step, status=None):
    """`call` must raise APIError with one of `codes` (any code when None) and, when given, that HTTP status."""
    try:
        result = call()
    except APIError as error:
        check((codes is None or error.code in codes) and (status is None or last["status"] == status),
              f"{step} ({last['status']} {error.code}: {error.message})")
        return
    check(False, f"{step} (answered {last['status']} {getattr(result, 'data', result)!r})")


def is_uuid(text):
    try:
        return str(uuid.UUID(text)) == text.lower()
    except (TypeError, ValueError, AttributeError):
        return False


def when(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def titles(query):
    return sorted(row["title"] for row in query.execute().data)


SERMON_COLUMNS = {"id", "_space", "title", "date", "service_type", "speaker", "duration", "audio",
                  "transcription_status", "summary_status", "is_archived"}
GRACE_DATE, HOPE_DATE, FAITH_DATE = "2026-11-01T10:00:00Z", "2026-11-08T10:00:00Z", "2026-10-25T10:00:00Z"

a_id, a_token, A = account("a")
b_id, _, B = account("b")

# Insert, then select.
inserted = A.from_("sermons").insert({"title": "Grace", "date": GRACE_DATE, "speaker": "Ann"}).execute()
check(last["status"] == 201 and len(inserted.data) == 1, "insert answers 201 with the row (Prefer: return=representation)")
grace = inserted.data[0]
grace_id = grace["id"]
check(is_uuid(grace_id) and grace["_space"] == a_id, "the server gives the row an id and A's personal space as _space")
check(set(grace) == SERMON_COLUMNS, f"a row is id, _space and the declared fields, no reserved sync column ({sorted(grace)})")
check(grace["title"] == "Grace" and grace["speaker"] == "Ann" and when(grace["date"]) == when(GRACE_DATE)
      and grace["duration"] is None, "the row holds what was inserted, and null for the fields not given")
found = A.from_("sermons").select("*").eq("id", grace_id).execute()
check(last["status"] == 200 and [row["id"] for row in found.data] == [grace_id], "select('*').eq('id', id) finds it")

# Bulk insert: postgrest sends ?columns="…","…" (each name quoted) with an array body.
note_texts = ["opening prayer", "first point", "second point"]
notes = A.from_("notes").insert([{"sermon_id": grace_id, "text": text, "timestamp": 1.5} for text in note_texts]).execute().data
check(len(notes) == 3 and sorted(note["text"] for note in notes) == sorted(note_texts)
      and all(note["sermon_id"] == grace_id and note["timestamp"] == 1.5 and note["_space"] == a_id and is_uuid(note["id"])
              for note in notes), "a bulk insert of 3 notes returns 3 rows")

# Upsert on a one-column unique key (transcripts: unique [sermon_id]).
first = A.from_("transcripts").upsert({"sermon_id": grace_id, "text": "v1"}, on_conflict="sermon_id").execute().data
second = A.from_("transcripts").upsert({"sermon_id": grace_id, "text": "v2"}, on_conflict="sermon_id").execute().data
check(len(first) == 1 and len(second) == 1 and second[0]["text"] == "v2", "upsert(on_conflict='sermon_id') returns the row")
rows = A.from_("transcripts").select("*").eq("sermon_id", grace_id).execute().data
check(len(rows) == 1 and rows[0]["text"] == "v2" and rows[0]["id"] == first[0]["id"] == second[0]["id"],
      "upserting twice leaves one transcript, text v2, under its first id")
ignored = A.from_("transcripts").upsert({"sermon_id": grace_id, "text": "v3"}, on_conflict="sermon_id",
                                        ignore_duplicates=True).execute().data
rows = A.from_("transcripts").select("text").eq("sermon_id", grace_id).execute().data
check(ignored == [] and rows == [{"text": "v2"}], "resolution=ignore-duplicates keeps the row and returns nothing")

# Upsert on a two-column unique key (seed 000's table, declared in rest_schema.yaml).
session_id, device_id = str(uuid.uuid4()), str(uuid.uuid4())
secrets = A.from_("agent_coding_session_secrets")
one = secrets.upsert({"session_id": session_id, "device_id": device_id, "sealed_secret": "sealed-1"},
                     on_conflict="session_id,device_id").execute().data
two = secrets.upsert({"session_id": session_id, "device_id": device_id, "sealed_secret": "sealed-2"},
                     on_conflict="session_id,device_id").execute().data
rows = secrets.select("*").eq("session_id", session_id).eq("device_id", device_id).execute().data
check(len(rows) == 1 and rows[0]["sealed_secret"] == "sealed-2" and rows[0]["id"] == one[0]["id"] == two[0]["id"],
      "upsert(on_conflict='session_id,device_id') twice leaves one row with the second value")
secrets.upsert({"session_id": session_id, "device_id": str(uuid.uuid4()), "sealed_secret": "other device"},
               on_conflict="session_id,device_id").execute()
rows = secrets.select("sealed_secret").eq("session_id", session_id).execute().data
check(sorted(row["sealed_secret"] for row in rows) == ["other device", "sealed-2"], "another device_id is another row")

# Update with a filter.
updated = A.from_("sermons").update({"speaker": "Bea"}).eq("id", grace_id).execute().data
check(len(updated) == 1 and updated[0]["speaker"] == "Bea" and updated[0]["title"] == "Grace",
      "update({'speaker': 'Bea'}).eq('id', id) returns the changed row")
check(A.from_("sermons").select("speaker").eq("id", grace_id).execute().data == [{"speaker": "Bea"}], "select sees the update")
A.from_("sermons").upsert({"id": grace_id, "title": "Grace", "date": GRACE_DATE, "duration": 2400}).execute()
rows = A.from_("sermons").select("speaker, duration").eq("id", grace_id).execute().data
check(rows == [{"speaker": "Bea", "duration": 2400}], "upsert on id merges the fields it names and keeps the others")

# Delete with a filter.
deleted = A.from_("notes").delete().eq("sermon_id", grace_id).execute().data
check(sorted(note["id"] for note in deleted) == sorted(note["id"] for note in notes), "delete().eq('sermon_id', id) returns the deleted notes")
check(A.from_("notes").select("*").eq("sermon_id", grace_id).execute().data == [], "the deleted notes are gone")

# Two more sermons (one without a speaker: a bulk insert sets keys another row names to null), with children.
more = A.from_("sermons").insert([{"title": "Hope", "date": HOPE_DATE, "speaker": "Carl"},
                                  {"title": "Faith", "date": FAITH_DATE}]).execute().data
check([row["title"] for row in more] == ["Hope", "Faith"] and more[1]["speaker"] is None,
      "a bulk insert returns its rows in order; a key another row names is null")
hope_id, faith_id = more[0]["id"], more[1]["id"]
A.from_("notes").insert([{"sermon_id": hope_id, "text": "late", "timestamp": 30.0},
                         {"sermon_id": hope_id, "text": "early", "timestamp": 5.0},
                         {"sermon_id": faith_id, "text": "only", "timestamp": 12.0}]).execute()
hope_transcript = A.from_("transcripts").insert({"sermon_id": hope_id, "text": "hope transcript"}).execute().data[0]
A.from_("summaries").insert({"sermon_id": hope_id, "title": "Hope, briefly", "text": "Three points.", "type": "bullet",
                             "status": "complete"}).execute()

# Embedded children, ordered by date. (PostgREST 10+ embeds a child with a unique link as one object or null; Ferry
# embeds children as lists whatever their unique keys.)
rows = A.from_("sermons").select("id, title, date, notes (id, text, timestamp), transcripts (id, text), summaries (*)") \
    .order("date", desc=True).execute().data
check([row["title"] for row in rows] == ["Hope", "Grace", "Faith"]
      and [when(row["date"]) for row in rows] == sorted((when(row["date"]) for row in rows), reverse=True),
      "order('date', desc=True) returns the sermons newest first")
check(all(set(row) == {"id", "title", "date", "notes", "transcripts", "summaries"} for row in rows)
      and all(isinstance(row["notes"], list) for row in rows),
      "each sermon has the selected columns and a notes list")
by = {row["title"]: row for row in rows}
check(sorted(note["text"] for note in by["Hope"]["notes"]) == ["early", "late"]
      and all(set(note) == {"id", "text", "timestamp"} for note in by["Hope"]["notes"])
      and by["Grace"]["notes"] == [] and [note["text"] for note in by["Faith"]["notes"]] == ["only"],
      "notes(id, text, timestamp) embeds each sermon's notes with those columns")
# transcripts and summaries are unique per sermon (unique: [sermon_id]): one-to-one, so each embeds as an object or
# null, as PostgREST embeds a child whose link is unique (the sermon app reads sermon.transcript, not a list).
check(by["Hope"]["transcripts"] == {"id": hope_transcript["id"], "text": "hope transcript"}
      and by["Grace"]["transcripts"]["text"] == "v2" and by["Faith"]["transcripts"] is None,
      "transcripts(id, text) embeds each sermon's one transcript as an object, or null")
summary = by["Hope"]["summaries"]
check(isinstance(summary, dict) and summary["title"] == "Hope, briefly" and summary["sermon_id"] == hope_id
      and summary["type"] == "bullet" and by["Grace"]["summaries"] is None and by["Faith"]["summaries"] is None,
      "summaries(*) embeds every column of each sermon's one summary")



# Embedded order, limit and filter (notes.order=…, notes.limit=…, notes.text=eq.…).
def hope_notes(query):
    rows = query.eq("id", hope_id).execute().data
    return [(note["text"], note["timestamp"]) for note in rows[0]["notes"]] if len(rows) == 1 else rows


check(hope_notes(A.from_("sermons").select("id, notes(text, timestamp)").order("timestamp", foreign_table="notes"))
      == [("early", 5.0), ("late", 30.0)], "order(..., foreign_table='notes') orders the embedded notes")
check(hope_notes(A.from_("sermons").select("id, notes(text, timestamp)").order("timestamp", desc=True, foreign_table="notes"))
      == [("late", 30.0), ("early", 5.0)], "order(..., desc=True, foreign_table='notes') orders them descending")
check(hope_notes(A.from_("sermons").select("id, notes(text, timestamp)").order("timestamp", foreign_table="notes")
                 .limit(1, foreign_table="notes")) == [("early", 5.0)], "limit(1, foreign_table='notes') limits the embedded notes")
check(hope_notes(A.from_("sermons").select("id, notes(text, timestamp)").eq("notes.text", "late")) == [("late", 30.0)],
      "eq('notes.text', …) filters the embedded notes, not the sermons")

# The parent, aliases, nesting.
rows = A.from_("notes").select("text, sermon:sermons(title, transcripts(text))").eq("sermon_id", hope_id).order("timestamp").execute().data
check([row["text"] for row in rows] == ["early", "late"]
      and all(isinstance(row["sermon"], dict) and row["sermon"]["title"] == "Hope"
              and row["sermon"]["transcripts"] == {"text": "hope transcript"} for row in rows),
      "a note embeds its parent as one object (sermon:sermons(...)), nesting the parent's children")
check(A.from_("sermons").select("heading:title, jottings:notes(text)").eq("id", faith_id).execute().data
      == [{"heading": "Faith", "jottings": [{"text": "only"}]}], "alias:column and alias:notes(...) rename")

# Counting and ranges.
page = A.from_("sermons").select("*", count="exact").order("date").range(0, 1).execute()
check(len(page.data) == 2 and page.count == 3, f"select('*', count='exact').range(0, 1): 2 rows, count 3 ({page.count})")
check(last["status"] == 206 and last["headers"].get("content-range") == "0-1/3",
      f"a partial page with a count is 206 with Content-Range 0-1/3 ({last['status']} {last['headers'].get('content-range')})")
planned = A.from_("sermons").select("id", count="planned").execute()
check(planned.count == 3 and last["status"] == 200 and last["headers"].get("content-range") == "0-2/3",
      "count='planned' is answered exactly; a whole result is 200")
check(A.from_("sermons").select("id", count="estimated").execute().count == 3, "count='estimated' is answered exactly")
head = A.from_("sermons").select("*", count="exact", head=True).execute()
check(last["status"] == 200 and head.count == 3 and head.data == [], "head=True counts without rows")
page = A.from_("sermons").select("id").limit(2).execute()
check(len(page.data) == 2 and page.count is None and last["headers"].get("content-range") == "0-1/*",
      "without a count, Content-Range is 0-1/*")
empty = A.from_("sermons").select("id", count="exact").eq("title", "Nothing").execute()
check(empty.data == [] and empty.count == 0 and last["headers"].get("content-range") == "*/0", "an empty result is */0")
refused(lambda: A.from_("sermons").select("*", count="exact").range(10, 11).execute(), ("PGRST103",),
        "an offset past the count is PGRST103", 416)

# A function: Ferry serves none, and says so in PostgREST's shape.
refused(lambda: A.rpc("archive_sermons", {}).execute(), ("PGRST202",), "rpc() is PGRST202, not a function", 404)

# single() and maybe_single().
one = A.from_("sermons").select("*").eq("id", grace_id).single().execute()
check(isinstance(one.data, dict) and one.data["id"] == grace_id, "single() returns one object")
refused(lambda: A.from_("sermons").select("*").eq("id", str(uuid.uuid4())).single().execute(), ("PGRST116",),
        "single() with no row is PGRST116", 406)
refused(lambda: A.from_("sermons").select("*").single().execute(), ("PGRST116",), "single() with three rows is PGRST116", 406)
check(A.from_("sermons").select("*").eq("id", str(uuid.uuid4())).maybe_single().execute() is None,
      "maybe_single() with no row returns None")
maybe = A.from_("sermons").select("*").eq("id", grace_id).maybe_single().execute()
check(maybe is not None and maybe.data["id"] == grace_id, "maybe_single() with one row returns it")


# Filters.
def sermons():
    return A.from_("sermons").select("title")


check(titles(sermons().in_("title", ["Grace", "Hope", "Nope"])) == ["Grace", "Hope"], "in_")
check(titles(sermons().in_("id", [grace_id, faith_id])) == ["Faith", "Grace"], "in_ on ids")
check(titles(sermons().not_.in_("title", ["Grace"])) == ["Faith", "Hope"], "not_.in_")
check(titles(sermons().is_("speaker", "null")) == ["Faith"], "is_('speaker', 'null')")
check(titles(sermons().not_.is_("speaker", "null")) == ["Grace", "Hope"], "not_.is_('speaker', 'null')")
check(titles(sermons().ilike("title", "%OPE")) == ["Hope"], "ilike matches without case")
check(titles(sermons().like("title", "Gr%")) == ["Grace"] and titles(sermons().like("title", "gr%")) == [],
      "like matches with case")
check(titles(sermons().or_("title.eq.Hope,speaker.eq.Bea")) == ["Grace", "Hope"], "or_('title.eq.Hope,speaker.eq.Bea')")
check(titles(sermons().or_("and(title.eq.Grace,speaker.eq.Bea),title.eq.Faith")) == ["Faith", "Grace"],
      "or_ with a nested and(...)")
check(titles(sermons().neq("title", "Grace")) == ["Faith", "Hope"], "neq")
check(titles(sermons().neq("speaker", "Bea")) == ["Hope"], "neq leaves out null, as SQL does")
check(titles(sermons().gt("date", GRACE_DATE)) == ["Hope"] and titles(sermons().lt("date", GRACE_DATE)) == ["Faith"],
      "gt and lt on a timestamp")
check(titles(sermons().gte("date", GRACE_DATE).lte("date", HOPE_DATE)) == ["Grace", "Hope"], "gte and lte together")
# 09:30-01:00 is 10:30Z: after Grace's 10:00Z, though it sorts before it as text.
check(titles(sermons().gt("date", "2026-11-01T09:30:00-01:00")) == ["Hope"],
      "a timestamp filter compares instants, whatever the offset it is written with")
check(titles(sermons().eq("duration", 2400)) == ["Grace"], "eq on an integer")
# httpx sends a space in a query value as +, which PostgREST reads as a space, as HTML forms do.
check(A.from_("summaries").select("title").eq("title", "Hope, briefly").execute().data == [{"title": "Hope, briefly"}],
      "eq with a space and a comma in the value")
check(A.from_("summaries").select("title").in_("title", ["Hope, briefly", "x"]).execute().data == [{"title": "Hope, briefly"}],
      "in_ with a quoted value holding a space and a comma")

# Isolation: another account.
check(B.from_("sermons").select("*").execute().data == [], "B's select of sermons returns none of A's")
check(B.from_("sermons").update({"title": "Mine"}).eq("id", grace_id).execute().data == [], "B's update of A's sermon returns nothing")
check(A.from_("sermons").select("title").eq("id", grace_id).execute().data == [{"title": "Grace"}], "and changes nothing")
check(B.from_("sermons").delete().eq("id", grace_id).execute().data == [], "B's delete of A's sermon returns nothing")
check(len(A.from_("sermons").select("id").eq("id", grace_id).execute().data) == 1, "and deletes nothing")
refused(lambda: B.from_("sermons").insert({"title": "Intruder", "date": GRACE_DATE, "_space": a_id}).execute(), ("42501",),
        "B's insert into A's space is 42501", 403)
# Real PostgreSQL would check the link past row-level security; Ferry keeps a child in its parent's space. Either refusal
# will do, as long as nothing lands under A's sermon.
refused(lambda: B.from_("notes").insert({"sermon_id": grace_id, "text": "under A's sermon"}).execute(),
        ("23503", "23514", "42501"), "B cannot put a note under A's sermon")
check(A.from_("notes").select("id").eq("sermon_id", grace_id).execute().data == [], "and A's sermon has no new note")
own = B.from_("sermons").insert({"title": "B's own", "date": GRACE_DATE}).execute().data
check(len(own) == 1 and own[0]["_space"] == b_id, "B's insert goes to B's personal space")
check(A.from_("sermons").select("id").eq("id", own[0]["id"]).execute().data == [], "and A does not see it")

# The anon key alone.
nobody = rest(anon)
try:
    rows = nobody.from_("sermons").select("*").execute().data
    check(rows == [], "the anon key alone reads no rows")
except APIError as error:
    check(error.code == "42501" and last["status"] == 401, f"the anon key alone is refused ({last['status']} {error.code})")
refused(lambda: nobody.from_("sermons").insert({"title": "Anon", "date": GRACE_DATE}).execute(), None,
        "the anon key alone cannot insert", 401)
refused(lambda: rest(a_token, key="not-a-key").from_("sermons").select("*").execute(), None, "a wrong apikey is 401", 401)

# The service-role key, as a transcription backend.
backend = rest(service, key=service)
made = backend.from_("summaries").insert({"_space": a_id, "sermon_id": faith_id, "title": "Faith, briefly",
                                          "text": "One point.", "type": "devotional", "status": "complete"}).execute().data
check(len(made) == 1 and made[0]["_space"] == a_id, "the service-role key inserts a summary into A's space")
check(A.from_("summaries").select("title").eq("sermon_id", faith_id).execute().data == [{"title": "Faith, briefly"}],
      "A reads the summary the backend wrote")
marked = backend.from_("sermons").update({"summary_status": "complete"}).eq("id", faith_id).execute().data
check(len(marked) == 1 and A.from_("sermons").select("summary_status").eq("id", faith_id).execute().data
      == [{"summary_status": "complete"}], "the service-role key updates A's sermon")
check(len(backend.from_("sermons").select("id").in_("id", [grace_id, hope_id, faith_id, own[0]["id"]]).execute().data) == 4,
      "the service-role key reads every space")
refused(lambda: backend.from_("transcripts").insert({"sermon_id": faith_id, "text": "where?"}).execute(), None,
        "a service-role insert without _space is refused", 400)

# Errors.
refused(lambda: A.from_("nope").select("*").execute(), ("PGRST205",), "an unknown table is PGRST205", 404)
refused(lambda: A.from_("profiles").select("*").execute(), ("PGRST205",), "a system collection is PGRST205", 404)
refused(lambda: A.from_("sermons").select("id, nope").execute(), ("42703",), "an unknown column in select is 42703", 400)
refused(lambda: A.from_("sermons").select("*").eq("nope", "x").execute(), ("42703",), "a filter on an unknown column is 42703", 400)
refused(lambda: A.from_("sermons").select("*").filter("title", "nope", "x").execute(), ("PGRST100",),
        "an unknown operator is PGRST100", 400)
refused(lambda: A.from_("sermons").insert({"title": "X", "date": GRACE_DATE, "nope": 1}).execute(), ("PGRST204",),
        "an unknown column in an insert is PGRST204", 400)
refused(lambda: A.from_("sermons").insert({"id": grace_id, "title": "Again", "date": GRACE_DATE}).execute(), ("23505",),
        "a plain insert of an existing id is 23505", 409)
refused(lambda: A.from_("transcripts").insert({"sermon_id": grace_id, "text": "again"}).execute(), ("23505",),
        "a plain insert breaking a unique key is 23505", 409)
refused(lambda: A.from_("notes").insert({"sermon_id": str(uuid.uuid4()), "text": "orphan"}).execute(), ("23503",),
        "a note whose sermon does not exist is 23503", 409)
refused(lambda: A.from_("sermons").insert({"title": "No date"}).execute(), ("23502",), "a missing required field is 23502", 400)
refused(lambda: A.from_("sermons").insert({"title": "X", "date": GRACE_DATE, "duration": "long"}).execute(), ("22P02",),
        "a value of the wrong type is 22P02", 400)
refused(lambda: A.from_("sermons").update({"_space": b_id}).eq("id", grace_id).execute(), None,
        "an update moving a row to another space is refused", 400)
check(A.from_("sermons").select("title").eq("id", grace_id).execute().data == [{"title": "Grace"}], "and the row stays")

# Deleting a parent deletes its children; return=minimal.
temp = A.from_("sermons").insert({"title": "Temp", "date": GRACE_DATE}).execute().data[0]
minimal = A.from_("notes").insert({"sermon_id": temp["id"], "text": "doomed"}, returning=ReturnMethod.minimal).execute()
check(last["status"] == 201 and minimal.data == [], "returning='minimal' answers 201 without a body")
A.from_("transcripts").insert({"sermon_id": temp["id"], "text": "doomed"}).execute()
check(len(A.from_("sermons").delete().eq("id", temp["id"]).execute().data) == 1, "delete a sermon")
check(A.from_("notes").select("id").eq("sermon_id", temp["id"]).execute().data == []
      and A.from_("transcripts").select("id").eq("sermon_id", temp["id"]).execute().data == [],
      "deleting a sermon deletes its notes and transcript")
check(A.from_("sermons").select("id", count="exact").execute().count == 3, "A has its three sermons left")
print("ok all", flush=True)

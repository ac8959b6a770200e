"""The plain HTTP client of Benchmarks/kinto-peer.sh: seeds the same records into Ferry and Kinto, then times a
cold pull of all of them and a no-op pull on each. Configured by the environment the script sets."""
import base64
import json
import os
import statistics
import time
import urllib.request
import uuid

RECORDS = int(os.environ["RECORDS"])
NOOPS = int(os.environ["NOOPS"])
COLDS = int(os.environ.get("COLDS", "5"))
PAGE = 5000  # Ferry's largest pull page; Kinto gets the same _limit.


def request(method, url, body=None, headers=None):
    """One request; returns (parsed JSON body, response headers)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=120) as response:
        return json.loads(response.read()), response.headers


def note(index):
    return {
        "title": f"Note {index}",
        "body": f"Body of note {index}: " + "lorem ipsum " * (8 + index % 5),
        "rank": index % 1000,
        "score": (index % 400) / 4,
        "done": index % 3 == 0,
    }


class Ferry:
    def __init__(self):
        profile = os.environ["FERRY_PROFILE"]
        session = json.load(open(os.path.join(profile, "session.json")))
        self.base = os.environ["FERRY_URL"]
        self.user = session["user"]["id"]
        self.device = open(os.path.join(profile, "device.id")).read().strip()
        self.headers = {"apikey": os.environ["FERRY_ANON_KEY"], "Authorization": "Bearer " + session["access_token"]}

    def seed(self):
        """Pushes the records in batches of 1000, one mutation each, every field with a clock of this device."""
        mutation_id = 0
        for start in range(0, RECORDS, 1000):
            mutations = []
            for index in range(start, min(start + 1000, RECORDS)):
                mutation_id += 1
                # The wire clock: <15-digit milliseconds>-<5-digit counter>-<node> (docs/sync.md).
                clock = f"{int(time.time() * 1000):015d}-{mutation_id % 100000:05d}-{self.device}"
                fields = note(index)
                mutations.append({
                    "mutationId": mutation_id, "space": self.user, "collection": "notes", "id": str(uuid.uuid4()),
                    "op": "upsert", "fields": fields, "clocks": {name: clock for name in fields},
                })
            reply, _ = request("POST", self.base + "/sync/v1/push", {"deviceId": self.device, "mutations": mutations}, self.headers)
            refused = [r for r in reply["results"] if r["status"] != "applied"]
            if refused:
                raise SystemExit(f"ferry refused a seeding push: {refused[:3]}")

    def pull(self, cursors):
        """Pulls pages from `cursors` until hasMore is false, in the rows layout with row clocks (docs/sync.md: each
        change an array of values, as Kinto's records are objects of values); returns (count, cursors)."""
        count = 0
        while True:
            body = {"cursors": cursors, "limit": PAGE, "clockForm": "row", "layout": "rows"}
            reply, _ = request("POST", self.base + "/sync/v1/pull", body, self.headers)
            count += sum(len(page["rows"]) for page in reply["pages"])
            cursors = reply["cursors"]
            if not reply["hasMore"]:
                return count, cursors


class Kinto:
    def __init__(self):
        self.base = os.environ["KINTO_URL"]
        self.headers = {"Authorization": "Basic " + base64.b64encode(b"peer:correct-horse").decode()}
        self.records = self.base + "/buckets/peer/collections/notes/records"

    def seed(self):
        request("PUT", self.base + "/buckets/peer", {"data": {}}, self.headers)
        request("PUT", self.base + "/buckets/peer/collections/notes", {"data": {}}, self.headers)
        path = "/buckets/peer/collections/notes/records"
        for start in range(0, RECORDS, 1000):
            batch = {"defaults": {"method": "POST", "path": path},
                     "requests": [{"body": {"data": note(index)}} for index in range(start, min(start + 1000, RECORDS))]}
            reply, _ = request("POST", self.base + "/batch", batch, self.headers)
            failed = [r for r in reply["responses"] if r["status"] >= 400]
            if failed:
                raise SystemExit(f"kinto refused a seeding batch: {failed[:3]}")

    def pull(self, since=None):
        """Lists the records (pages of _limit, following Next-Page); returns (count, the collection's ETag timestamp)."""
        url = f"{self.records}?_limit={PAGE}" + (f"&_since={since}" if since else "")
        count, etag = 0, since
        while url:
            reply, headers = request("GET", url, headers=self.headers)
            count += len(reply["data"])
            etag = etag or headers["ETag"].strip('"')
            url = headers.get("Next-Page")
        return count, etag


def timed(function, *arguments):
    start = time.perf_counter()
    result = function(*arguments)
    return time.perf_counter() - start, result


def measure(name, peer, cold, noop):
    seconds, _ = timed(peer.seed)
    print(f"kinto-peer: seeded {RECORDS} records into {name} in {seconds:.1f} s", flush=True)
    # A cold pull starts from nothing (no cursor, no _since); one of 20,000 records takes a fraction of a second, so
    # the machine's noise is taken out by the median of COLDS of them, for both peers alike.
    pulls = []
    for _ in range(COLDS):
        seconds, (count, position) = timed(cold)
        if count < RECORDS:
            raise SystemExit(f"{name}'s cold pull returned {count} of {RECORDS} records")
        pulls.append(seconds)
    seconds = statistics.median(pulls)
    latencies = []
    for _ in range(NOOPS):
        latency, (extra, _) = timed(noop, position)
        if extra:
            raise SystemExit(f"{name}'s no-op pull returned {extra} records")
        latencies.append(latency * 1000)
    return count / seconds, seconds, statistics.median(latencies)


def main():
    ferry, kinto = Ferry(), Kinto()
    ferry_rate, ferry_seconds, ferry_noop = measure("ferry", ferry, lambda: ferry.pull({}), ferry.pull)
    kinto_rate, kinto_seconds, kinto_noop = measure("kinto", kinto, lambda: kinto.pull(), kinto.pull)
    print(f"""
| Measure ({RECORDS} records, one PostgreSQL cluster, pages of {PAGE}) | Ferry | Kinto | Ferry / Kinto |
|---|---:|---:|---:|
| cold pull of every record, median of {COLDS} | {ferry_rate:.0f} records/s ({ferry_seconds:.2f} s) | {kinto_rate:.0f} records/s ({kinto_seconds:.2f} s) | {ferry_rate / kinto_rate:.2f} |
| no-op pull, median of {NOOPS} | {ferry_noop:.2f} ms | {kinto_noop:.2f} ms | {ferry_noop / kinto_noop:.2f} |
""")
    print(json.dumps({
        "records": RECORDS,
        "ferry_cold_pull_records_per_s": round(ferry_rate, 1),
        "kinto_cold_pull_records_per_s": round(kinto_rate, 1),
        "cold_pull_ratio": round(ferry_rate / kinto_rate, 4),
        "ferry_noop_ms": round(ferry_noop, 3),
        "kinto_noop_ms": round(kinto_noop, 3),
        "noop_ratio": round(ferry_noop / kinto_noop, 4),
    }, sort_keys=True))


if __name__ == "__main__":
    main()

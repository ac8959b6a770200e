import Crypto
import FerryCore
import Foundation

/// A digest of everything a mutation writes (space, collection, record, operation, fields and clocks; not its id),
/// so a replayed id can be told apart from a different write that reuses it.
///
/// Ids alone cannot tell: a device whose store was reset or restored from a backup numbers new writes again from
/// ids the server has seen. The server answers `duplicate` only when the id *and* the fingerprint match what it
/// processed (docs/architecture.md, invariant 12).
struct MutationFingerprint: Sendable, Hashable {
    /// The first 16 bytes of a SHA-256 over a canonical, length-prefixed encoding.
    var bytes: [UInt8]

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The fingerprints of a push's mutations, in order, made with one encoder whose buffer each reuses. Fields whose
    /// JSON certainly exceeds `recordLimit` bytes are refused whatever they hold (`record_too_large`), so only their
    /// names go in: a huge push is not hashed value by value.
    static func of(_ mutations: [Mutation], recordLimit: Int) -> [MutationFingerprint] {
        var encoder = CanonicalEncoder()
        return mutations.indices.map { MutationFingerprint(mutations[$0], recordLimit: recordLimit, encoder: &encoder) }
    }

    private init(_ mutation: Mutation, recordLimit: Int, encoder: inout CanonicalEncoder) {
        encoder.reset()
        encoder.uuid(mutation.space)
        encoder.text(mutation.collection)
        encoder.uuid(mutation.id)
        encoder.text(mutation.op.rawValue)
        let fields = mutation.fields.sorted(by: { $0.key < $1.key })
        if JSONValue.object(mutation.fields).certainlyExceedsJSONSize(recordLimit) {
            encoder.tag(7)
            encoder.count(fields.count)
            for (name, _) in fields { encoder.text(name) }
        } else {
            encoder.count(fields.count)
            for (name, value) in fields {
                encoder.text(name)
                encoder.value(value)
            }
        }
        // The clocks as the request carried them when that is their written text: the same names and clocks in the
        // same order, so the same bytes, without sorting them again.
        if let text = mutation.receivedClocksText, encoder.clocks(writtenText: text) {
        } else {
            encoder.count(mutation.clocks.count)
            for (name, clock) in mutation.clocks.sorted(by: { $0.key < $1.key }) {
                encoder.text(name)
                encoder.clock(clock)
            }
        }
        bytes = Array(encoder.finalize().prefix(Self.length))
    }

    /// The number of digest bytes kept: 128 bits, plenty to tell writes of one device apart.
    static let length = 16
}

/// Feeds a value to a digest as tagged, length-prefixed bytes, so no two different values feed the same bytes.
///
/// Bytes collect in a buffer that goes to the hash 64 KiB at a time: a value of millions of tiny members (a push
/// can carry one) costs an append per member, not a call into the hash function per member.
private struct CanonicalEncoder {
    private var hasher = SHA256()
    private var buffer: [UInt8] = []
    private static let chunk = 64 * 1024

    /// Room for a typical record; a large one grows the buffer up to a chunk (64 KiB reserved per mutation of a push
    /// of 1000 was a large allocation each time).
    init() { buffer.reserveCapacity(1024) }

    /// Starts a new digest, keeping the buffer's room.
    mutating func reset() {
        hasher = SHA256()
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func tag(_ byte: UInt8) {
        buffer.append(byte)
        flushIfFull()
    }

    mutating func count(_ count: Int) {
        append(UInt64(count))
    }

    mutating func text(_ text: String) {
        count(text.utf8.count)
        buffer.append(contentsOf: text.utf8)
        flushIfFull()
    }

    /// A UUID's lowercase text, length-prefixed as ``text(_:)`` would write it, without making the string.
    mutating func uuid(_ uuid: UUID) {
        count(36)
        uuid.appendLowercased(to: &buffer)
        flushIfFull()
    }

    /// The last clock written and its bytes: most fields of a record share one clock, written once and copied.
    private var lastClock: HLC?
    private var lastClockBytes: [UInt8] = []

    /// A clock's text, length-prefixed as ``text(_:)`` would write its `description`, without making the string.
    mutating func clock(_ clock: HLC) {
        if lastClock == clock {
            buffer.append(contentsOf: lastClockBytes)
            flushIfFull()
            return
        }
        let lengthAt = buffer.count
        withUnsafeBytes(of: UInt64(0)) { buffer.append(contentsOf: $0) }  // the length, filled in below (no flush in between)
        clock.write(into: &buffer)
        let length = UInt64(buffer.count - lengthAt - 8)
        for index in 0..<8 { buffer[lengthAt + index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64(index))) }
        lastClock = clock
        lastClockBytes.removeAll(keepingCapacity: true)
        lastClockBytes.append(contentsOf: buffer[lengthAt...])
        flushIfFull()
    }

    /// The count and the pairs of a clock text ``ClockMap/text(_:)`` wrote, as ``count(_:)``, ``text(_:)`` and
    /// ``clock(_:)`` write them (a clock's wire text is its `description`); `false`, writing nothing, for other text.
    mutating func clocks(writtenText text: String) -> Bool {
        // Appended without a flush in between, so the count can be filled in at `countAt`.
        let countAt = buffer.count
        func word(_ value: Int) { withUnsafeBytes(of: UInt64(value).bigEndian) { buffer.append(contentsOf: $0) } }
        word(0)
        guard let count = ClockMap.forEachWrittenPair(in: text, { name, clock in
            word(name.count)
            buffer.append(contentsOf: name)
            word(clock.count)
            buffer.append(contentsOf: clock)
        }) else {
            buffer.removeSubrange(countAt...)
            return false
        }
        withUnsafeBytes(of: UInt64(count).bigEndian) { buffer.replaceSubrange(countAt..<countAt + 8, with: $0) }
        flushIfFull()
        return true
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: tag(0)
        case .bool(let flag): tag(flag ? 2 : 1)
        case .number(let number):
            tag(3)
            append(number.bitPattern)
        case .string(let string):
            tag(4)
            text(string)
        case .array(let items):
            tag(5)
            count(items.count)
            for item in items { self.value(item) }
        case .object(let members):
            tag(6)
            count(members.count)
            guard !members.isEmpty else { return }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                text(name)
                self.value(member)
            }
        }
    }

    mutating func finalize() -> SHA256.Digest {
        hasher.update(data: buffer)
        return hasher.finalize()
    }

    /// Eight bytes, big-endian.
    private mutating func append(_ word: UInt64) {
        withUnsafeBytes(of: word.bigEndian) { buffer.append(contentsOf: $0) }
        flushIfFull()
    }

    private mutating func flushIfFull() {
        guard buffer.count >= Self.chunk else { return }
        hasher.update(data: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Fingerprints of a device's processed mutations, so that replaying any of them answers `duplicate`, or `rejected`
/// again with its code when the server refused it: 24-byte entries (an 8-byte big-endian mutation id, then the 16-byte
/// fingerprint) in ascending id order. A refused mutation's id field has its top bit set, the id in the bits below and
/// the refusal's number (``ReplayedRejection``) in the lowest 9: entries stored before refusals were kept read as
/// processed, as they were answered then. Each push stores its own
/// fresh ones as one row of `ferry_device_batches` and drops the rows out of the window (``capacity``); a push that
/// carries an id at or below the last processed one reads the rows back, joined in id order, and finds an id by binary
/// search. An id older than the window is refused as `mutation_id_stale`, and the device sends it again under a new
/// id, which merges to the same record.
struct ProcessedBatch: Sendable, Hashable {
    /// How many mutation ids back fingerprints are kept: four pushes of the largest size
    /// (``SyncLimits/maximumBatchLength``), since the SDK writes one reply's acknowledgement while the next three pushes
    /// are on the wire, and a crash then leaves all four to be sent again. The capacity saves work, it does not keep
    /// writes.
    static let capacity = 4000
    private static let width = 8 + MutationFingerprint.length

    /// The entries, oldest first.
    private(set) var blob: [UInt8]

    /// No fingerprints.
    init() { blob = [] }

    /// The fingerprints of stored batch rows, joined in id order (a torn trailing entry is dropped).
    init(blob: [UInt8]) {
        self.blob = Array(blob.prefix(blob.count - blob.count % Self.width))
    }

    var count: Int { blob.count / Self.width }

    var isEmpty: Bool { blob.isEmpty }

    /// The fingerprint processed under `id`, if it is still held.
    func fingerprint(of id: Int64) -> MutationFingerprint? {
        entry(of: id)?.fingerprint
    }

    /// What was processed under `id`, if it is still held: its fingerprint, and the code it was refused with, if it was.
    func entry(of id: Int64) -> (fingerprint: MutationFingerprint, rejection: ErrorCode?)? {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            let (held, refusal) = key(at: middle)
            if held == id {
                let start = middle * Self.width + 8
                return (MutationFingerprint(bytes: Array(blob[start..<start + MutationFingerprint.length])), refusal.map(ReplayedRejection.code))
            }
            if held < id { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// These fingerprints, then `fingerprint` under `id`, refused with `rejection` when it was. A fresh id is above
    /// every id held (they are at most the last processed one); entries at or above it, which only a damaged row could
    /// hold, are dropped to keep the order.
    mutating func append(_ id: Int64, _ fingerprint: MutationFingerprint, rejection: ErrorCode? = nil) {
        while count > 0, key(at: count - 1).id >= id { blob.removeLast(Self.width) }
        let stored = rejection.map { Self.refusedFlag | UInt64(id) << Self.codeBits | UInt64(ReplayedRejection.number(of: $0)) } ?? UInt64(id)
        withUnsafeBytes(of: stored.bigEndian) { blob.append(contentsOf: $0) }
        blob.append(contentsOf: fingerprint.bytes)
    }

    /// These entries, those of `results` that were refused marked with their codes: what a push stores once its
    /// results are final (a write can still refuse a mutation its plan applied).
    func marking(_ results: [MutationResult]) -> ProcessedBatch {
        let refused = Dictionary(results.compactMap { result in
            result.status == .rejected ? (result.mutationId, ErrorCode(rawValue: result.code ?? ErrorCode.invalidRecord.rawValue)) : nil
        }, uniquingKeysWith: { first, _ in first })
        guard !refused.isEmpty else { return self }
        var marked = ProcessedBatch()
        for index in 0..<count {
            let id = key(at: index).id, start = index * Self.width + 8
            marked.append(id, MutationFingerprint(bytes: Array(blob[start..<start + MutationFingerprint.length])), rejection: refused[id])
        }
        return marked
    }

    private static let refusedFlag: UInt64 = 1 << 63
    private static let codeBits: UInt64 = 9

    private func key(at index: Int) -> (id: Int64, refusal: Int?) {
        let start = index * Self.width
        let stored = blob[start..<start + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard stored & Self.refusedFlag != 0 else { return (Int64(bitPattern: stored), nil) }
        return (Int64((stored & ~Self.refusedFlag) >> Self.codeBits), Int(stored & (1 << Self.codeBits - 1)))
    }
}

/// The per-mutation refusals a replay answers again, by the number kept beside a processed fingerprint. Append only:
/// the numbers are stored. A code not listed is kept as the last number and replayed as `invalid_record`.
enum ReplayedRejection {
    static let codes: [ErrorCode] = [
        "invalid_record", "unknown_collection", "unknown_field", "type_mismatch", "forbidden_space", "record_too_large",
        "parent_missing", "space_mismatch", "unique_violation", "invalid_clock", "unique_value_too_long", "space_not_found",
        "space_not_encrypted", "space_key_missing", "key_version_conflict", "encryption_required", "invalid_secret",
        "blob_missing",
    ]
    private static let numbers = Dictionary(uniqueKeysWithValues: codes.enumerated().map { ($1, $0 + 1) })
    private static let other = 511

    static func number(of code: ErrorCode) -> Int { numbers[code] ?? other }

    static func code(_ number: Int) -> ErrorCode { (1...codes.count).contains(number) ? codes[number - 1] : "invalid_record" }
}

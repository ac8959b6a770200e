import Crypto
import FerryCore
import Foundation

/// A digest of everything a mutation writes (space, collection, record, operation, fields and clocks; not its id),
/// so a replayed id can be told apart from a different write that reuses it.
///
/// Ids alone cannot tell: a device whose store was reset or restored from a backup numbers new writes again from
/// ids the server has seen. The server answers `duplicate` only when the id *and* the fingerprint match what it
/// processed (DESIGN.md §6, invariant 12).
struct MutationFingerprint: Sendable, Hashable {
    /// The first 16 bytes of a SHA-256 over a canonical, length-prefixed encoding.
    var bytes: [UInt8]

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    init(_ mutation: Mutation) {
        var hasher = SHA256()
        var encoder = CanonicalEncoder { hasher.update(data: $0) }
        encoder.text(mutation.space.uuidString.lowercased())
        encoder.text(mutation.collection)
        encoder.text(mutation.id.uuidString.lowercased())
        encoder.text(mutation.op.rawValue)
        encoder.count(mutation.fields.count)
        for (name, value) in mutation.fields.sorted(by: { $0.key < $1.key }) {
            encoder.text(name)
            encoder.value(value)
        }
        encoder.count(mutation.clocks.count)
        for (name, clock) in mutation.clocks.sorted(by: { $0.key < $1.key }) {
            encoder.text(name)
            encoder.text(clock.description)
        }
        bytes = Array(hasher.finalize().prefix(Self.length))
    }

    static let length = 16
}

/// Feeds a value to a digest as tagged, length-prefixed bytes, so no two different values feed the same bytes.
private struct CanonicalEncoder {
    let feed: (UnsafeRawBufferPointer) -> Void

    init(_ feed: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.feed = feed
    }

    mutating func tag(_ byte: UInt8) {
        withUnsafeBytes(of: byte) { feed($0) }
    }

    mutating func count(_ count: Int) {
        withUnsafeBytes(of: UInt64(count).bigEndian) { feed($0) }
    }

    mutating func text(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            count(bytes.count)
            feed(UnsafeRawBufferPointer(bytes))
        }
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: tag(0)
        case .bool(let flag): tag(flag ? 2 : 1)
        case .number(let number):
            tag(3)
            withUnsafeBytes(of: number.bitPattern.bigEndian) { feed($0) }
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
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                text(name)
                self.value(member)
            }
        }
    }
}

/// The fingerprints of a device's most recently processed mutations, which its server-side progress row remembers
/// so that replaying any of them answers `duplicate`: one blob of 24-byte entries (an 8-byte big-endian mutation
/// id, then the 16-byte fingerprint), at most ``capacity`` of them (24 KiB). An older id is refused as
/// `mutation_id_stale`, and the device sends it again under a new id, which merges to the same record.
struct ProcessedBatch: Sendable, Hashable {
    /// How many fingerprints are kept: one full push.
    static let capacity = 1000

    var fingerprints: [Int64: MutationFingerprint] = [:]

    init(fingerprints: [Int64: MutationFingerprint] = [:]) {
        self.fingerprints = fingerprints
    }

    init(blob: [UInt8]) {
        let width = 8 + MutationFingerprint.length
        var index = 0
        while index + width <= blob.count {
            let id = blob[index..<index + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            fingerprints[Int64(bitPattern: id)] = MutationFingerprint(bytes: Array(blob[index + 8..<index + width]))
            index += width
        }
    }

    /// These fingerprints and `newer` ones, keeping the ``capacity`` highest ids.
    func adding(_ newer: ProcessedBatch) -> ProcessedBatch {
        var merged = fingerprints.merging(newer.fingerprints) { _, new in new }
        if merged.count > Self.capacity {
            for id in merged.keys.sorted().prefix(merged.count - Self.capacity) { merged[id] = nil }
        }
        return ProcessedBatch(fingerprints: merged)
    }

    var blob: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fingerprints.count * (8 + MutationFingerprint.length))
        for (id, fingerprint) in fingerprints.sorted(by: { $0.key < $1.key }) {
            withUnsafeBytes(of: UInt64(bitPattern: id).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: fingerprint.bytes)
        }
        return bytes
    }
}

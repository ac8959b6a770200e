import Crypto
import FerryCore
@testable import FerryServer
import Foundation
import Testing

/// A fingerprint is stored with a device's progress, so its bytes must never change between versions: a replay
/// after an upgrade would otherwise be refused as `mutation_id_stale`.
@Suite("Mutation fingerprints")
struct MutationFingerprintTests {
    /// The documented encoding, written out plainly: tagged, length-prefixed (8 bytes, big-endian) values.
    static func reference(_ mutation: Mutation) -> [UInt8] {
        var bytes: [UInt8] = []
        func word(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
        func text(_ string: String) { word(UInt64(string.utf8.count)); bytes += Array(string.utf8) }
        func value(_ json: JSONValue) {
            switch json {
            case .null: bytes.append(0)
            case .bool(let flag): bytes.append(flag ? 2 : 1)
            case .number(let number): bytes.append(3); word(number.bitPattern)
            case .string(let string): bytes.append(4); text(string)
            case .array(let items): bytes.append(5); word(UInt64(items.count)); items.forEach(value)
            case .object(let members):
                bytes.append(6); word(UInt64(members.count))
                for (key, member) in members.sorted(by: { $0.key < $1.key }) { text(key); value(member) }
            }
        }
        text(mutation.space.uuidString.lowercased())
        text(mutation.collection)
        text(mutation.id.uuidString.lowercased())
        text(mutation.op.rawValue)
        word(UInt64(mutation.fields.count))
        for (name, field) in mutation.fields.sorted(by: { $0.key < $1.key }) { text(name); value(field) }
        word(UInt64(mutation.clocks.count))
        for (name, clock) in mutation.clocks.sorted(by: { $0.key < $1.key }) { text(name); text(clock.description) }
        return Array(SHA256.hash(data: bytes).prefix(16))
    }

    @Test("the fingerprint is the first 16 bytes of SHA-256 over the documented encoding, clocks included")
    func stable() {
        let clock = HLC(milliseconds: 1_763_900_000_123, counter: 42, node: "4f0c2a9e-1111-4222-8333-944445555666")
        let mutation = Mutation(
            mutationId: 7, space: UUID(), collection: "notes", id: UUID(), op: .upsert,
            fields: ["text": .string("a \"b\" ☕"), "n": .number(2.5), "tags": .array([.null, .bool(true)]), "meta": .object(["k": .object([:])])],
            clocks: ["text": clock, "n": clock, "tags": HLC(milliseconds: 1, counter: 0, node: "server"), "meta": clock]
        )
        #expect(MutationFingerprint.of([mutation], recordLimit: 256 * 1024).first?.bytes == Self.reference(mutation))
        // A push of many clocks crosses the 64 KiB flush boundary inside a clock.
        var many = mutation
        many.clocks = Dictionary(uniqueKeysWithValues: (0..<3000).map { ("field\($0)", clock) })
        #expect(MutationFingerprint.of([many], recordLimit: 256 * 1024).first?.bytes == Self.reference(many))
        // A push's fingerprints share one encoder (its buffer, its last clock): each is still its mutation's alone.
        var other = mutation
        other.clocks = ["text": HLC(milliseconds: 2, counter: 1, node: "other"), "n": clock, "tags": clock, "meta": clock]
        let batch = [mutation, many, other, mutation]
        #expect(MutationFingerprint.of(batch, recordLimit: 256 * 1024).map(\.bytes) == batch.map(Self.reference))
    }

    @Test("clocks read from a request's text digest as the same bytes as clocks built in code")
    func clocksFromRequestText() throws {
        let (space, record) = (UUID(), UUID())
        let early = HLC(milliseconds: 1_763_900_000_123, counter: 42, node: "4f0c2a9e-1111-4222-8333-944445555666")
        let late = HLC(milliseconds: 1_763_900_000_124, counter: 0, node: "4f0c2a9e-1111-4222-8333-944445555666")
        func mutation(_ id: Int, clocks: String) -> String {
            #"{"mutationId":\#(id),"space":"\#(space.lowercasedText)","collection":"notes","id":"\#(record.lowercasedText)","op":"upsert","fields":{"a":1,"b":"x"},"clocks":\#(clocks)}"#
        }
        let written = #"{"a":"\#(early)","b":"\#(late)","c":"\#(early)"}"#
        let unordered = #"{"b":"\#(late)","a":"\#(early)","c":"\#(early)"}"#
        let many = "{" + (0..<3000).map { #""f\#(String(format: "%04d", $0))":"\#(early)""# }.joined(separator: ",") + "}"
        let text = #"{"deviceId":"\#(UUID().lowercasedText)","mutations":[\#(mutation(1, clocks: written)),\#(mutation(2, clocks: unordered)),\#(mutation(3, clocks: many)),\#(mutation(4, clocks: "{}"))]}"#
        let push = try JSONValueDecoder().decode(PushRequest.self, from: Array(text.utf8))
        #expect(push.mutations.map { $0.receivedClocksText != nil } == [true, false, true, true])
        let fingerprints = MutationFingerprint.of(push.mutations, recordLimit: 256 * 1024).map(\.bytes)
        #expect(fingerprints == push.mutations.map(Self.reference))
        #expect(fingerprints[0] == fingerprints[1], "the same clocks in another order are the same write")
    }

    @Test("stored entries keep a refusal's code beside the id; entries stored before that read as processed, in id order")
    func refusalsKept() {
        let print = { (byte: UInt8) in MutationFingerprint(bytes: Array(repeating: byte, count: MutationFingerprint.length)) }
        var older = ProcessedBatch()
        older.append(7, print(7))
        older.append(9, print(9))
        var fresh = ProcessedBatch()
        fresh.append(12, print(12))
        fresh.append(13, print(13))
        fresh.append(14, print(14))
        fresh.append(9_007_199_254_740_991, print(15))
        let results = [
            MutationResult(mutationId: 12, status: .applied), MutationResult(mutationId: 13, status: .rejected, code: "space_key_missing"),
            MutationResult(mutationId: 14, status: .rejected, code: "some_future_code"),
            MutationResult(mutationId: 9_007_199_254_740_991, status: .rejected, code: "parent_missing"),
        ]
        let stored = ProcessedBatch(blob: older.blob + fresh.marking(results).blob)
        #expect(stored.count == 6)
        #expect(stored.entry(of: 7)?.fingerprint == print(7) && stored.entry(of: 7)?.rejection == nil)
        #expect(stored.entry(of: 12)?.rejection == nil)
        #expect(stored.entry(of: 13)?.fingerprint == print(13) && stored.entry(of: 13)?.rejection == "space_key_missing")
        #expect(stored.entry(of: 14)?.rejection == "invalid_record", "a code the table lacks replays as invalid_record")
        #expect(stored.entry(of: 9_007_199_254_740_991)?.fingerprint == print(15), "the largest id keeps its code")
        #expect(stored.entry(of: 9_007_199_254_740_991)?.rejection == "parent_missing")
        #expect(stored.entry(of: 8) == nil && stored.entry(of: 9)?.fingerprint == print(9))
    }
}

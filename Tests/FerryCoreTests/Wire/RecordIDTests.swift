@testable import FerryCore
import Foundation
import Testing

@Suite("Record ids: version 7 UUIDs that sort in the order they were made")
struct RecordIDTests {
    @Test("Ids are version 7, RFC 9562 variant, read back by Foundation, all different and increasing in bytes and text")
    func increasing() {
        var previous = UUID.timeOrdered()
        var seen: Set<UUID> = [previous]
        for _ in 0..<20_000 {
            let id = UUID.timeOrdered()
            let text = id.uuidString
            #expect(Array(text)[14] == "7", "version 7: \(text)")
            #expect("89AB".contains(Array(text)[19]), "variant 10xx: \(text)")
            #expect(UUID(uuidString: text) == id)
            #expect(previous.lowercasedText < id.lowercasedText, "\(previous) then \(id)")
            #expect(Self.bytes(previous).lexicographicallyPrecedes(Self.bytes(id)))
            seen.insert(id)
            previous = id
        }
        #expect(seen.count == 20_001)
    }

    @Test("The first 48 bits are the Unix time in milliseconds")
    func carriesTheTime() throws {
        let now = Date(timeIntervalSince1970: 4_000_000_000.123)
        let milliseconds = Self.bytes(RecordIDGenerator().next(now: now)).prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(milliseconds == 4_000_000_000_123)
    }

    @Test("A wall clock that steps back, or more than 4,096 ids in a millisecond, never makes a smaller id")
    func neverGoesBack() {
        let generator = RecordIDGenerator()
        let later = Date(timeIntervalSince1970: 4_100_000_000)
        var previous = generator.next(now: later)
        for step in 0..<10_000 {
            // The same millisecond 5,000 times (the sequence runs out and borrows the next one), then an hour earlier.
            let now = step < 5_000 ? later : later.addingTimeInterval(-3_600)
            let id = generator.next(now: now)
            #expect(previous.lowercasedText < id.lowercasedText, "step \(step): \(previous) then \(id)")
            previous = id
        }
    }

    @Test("Ids keep 62 random bits: two made in the same millisecond differ past the time and sequence")
    func random() {
        let generator = RecordIDGenerator()
        let now = Date(timeIntervalSince1970: 4_200_000_000)
        let tails = (0..<1_000).map { _ in Self.bytes(generator.next(now: now)).suffix(8) }
        #expect(Set(tails.map { Array($0) }).count == 1_000)
    }

    private static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }
}

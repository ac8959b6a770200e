import Foundation
import Synchronization

extension UUID {
    /// A new record id: a version 7 UUID (RFC 9562) — 48 bits of Unix milliseconds, a 12-bit sequence within the
    /// millisecond, then 62 random bits from the system's secure generator.
    ///
    /// Ids made one after another sort after one another (in bytes and in their lowercase text), in this process
    /// even when the wall clock steps back. That is what keeps a store's `id` index cheap: a new row lands on the
    /// index's last page instead of a random one. With random (version 4) ids every batch of writes — a pulled page,
    /// a push, an acknowledgement — dirtied pages all over the index, and the write-ahead log carried each of them
    /// again in every transaction (docs/benchmarks.md). The 62 random bits keep ids unguessable and unique across
    /// devices; the price is that an id tells when its record was created, which its clocks tell its readers anyway.
    public static func timeOrdered() -> UUID {
        RecordIDGenerator.shared.next(now: Date())
    }
}

/// Makes ``Foundation/UUID/timeOrdered()``'s ids; remembers the last (millisecond, sequence) it handed out, so that
/// its ids never go back.
final class RecordIDGenerator: Sendable {
    static let shared = RecordIDGenerator()
    private let last = Mutex<(milliseconds: UInt64, sequence: UInt64)>((0, 0))

    func next(now: Date) -> UUID {
        let (milliseconds, sequence) = advance(to: UInt64(max(0, now.timeIntervalSince1970 * 1000)))
        var generator = SystemRandomNumberGenerator()
        let random = generator.next() as UInt64
        var bytes = (
            (milliseconds << 16 | 0x7000 | sequence).bigEndian,  // 48-bit time, version 7, 12-bit sequence
            ((random >> 2) | 0x8000_0000_0000_0000).bigEndian  // RFC 9562 variant (10), 62 random bits
        )
        return withUnsafeBytes(of: &bytes) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    private func advance(to now: UInt64) -> (milliseconds: UInt64, sequence: UInt64) {
        last.withLock { last in
            if now > last.milliseconds {
                // A fresh millisecond starts its sequence at a random point of the lower half, so that the ids of two
                // devices in one millisecond do not line up, and leaves the upper half for more ids in it.
                var generator = SystemRandomNumberGenerator()
                last = (now & 0xFFFF_FFFF_FFFF, generator.next(upperBound: 0x800 as UInt64))
            } else if last.sequence < 0xFFF {
                last.sequence += 1
            } else {
                // 4,096 ids in one millisecond, or a clock that went back: borrow the next millisecond.
                last = ((last.milliseconds + 1) & 0xFFFF_FFFF_FFFF, 0)
            }
            return last
        }
    }
}

import Foundation
import Synchronization

/// A clock the test sets: the ``FerryClient/AuthClient`` and the fake server read the same time.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    var seconds: Int { Int(now.timeIntervalSince1970) }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }
}

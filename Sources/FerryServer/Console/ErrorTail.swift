import FerryCore
import Foundation
import Synchronization

/// The last errors the server answered, for the console's live tail: method, path (never the query, which may carry
/// a token), status, code and message. In memory, per instance.
final class ErrorTail: Sendable {
    struct Entry: Sendable {
        var at: Date
        var method: String
        var path: String
        var status: Int
        var code: String
        var message: String
    }

    let capacity: Int
    private let entries = Mutex<[Entry]>([])

    init(capacity: Int = 100) {
        self.capacity = capacity
    }

    /// Newest first.
    var recent: [Entry] { entries.withLock { $0.reversed() } }

    /// Notes an error answered with `status` and `code` (the HTTP layer's answer, told in plain values).
    func record(method: String, path: String, status: Int, code: ErrorCode, message: String) {
        // The console's own refusals (a signed-out page asking for its session) are not the app's errors.
        guard !path.hasPrefix("/console") else { return }
        let entry = Entry(
            at: Date(), method: method, path: String(path.prefix(200)), status: status, code: code.rawValue,
            message: String(message.prefix(300))
        )
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }
}

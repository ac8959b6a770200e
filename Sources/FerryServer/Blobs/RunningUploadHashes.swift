import FerrySecurity
import Foundation
import Synchronization

/// The SHA-256 state of the uploads this instance received the bytes of, so completing one hashes nothing again.
///
/// An entry covers the first `offset` bytes of one stored content (`content_id`); an upload whose bytes another
/// instance wrote, or that was dropped and begun again under the same id, finds no entry for its content and offset,
/// and its bytes are read back and hashed instead, as before. Losing an entry only costs that reading.
final class RunningUploadHashes: Sendable {
    struct Entry: Sendable {
        var content: UUID
        var offset: Int64
        var hasher: ContentHasher
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Past this many uploads in progress on one instance the table starts again empty.
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// Takes the entry of `id` out of the table.
    func take(_ id: UploadID) -> Entry? {
        entries.withLock { $0.removeValue(forKey: id.text) }
    }

    func put(_ id: UploadID, _ entry: Entry) {
        entries.withLock { table in
            if table.count >= capacity, table[id.text] == nil { table.removeAll() }
            table[id.text] = entry
        }
    }
}

/// What ``LocalStore/doctor()`` found.
public struct StoreHealthReport: Sendable, Hashable {
    /// One finding: a stable code and a sentence.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// A stable machine code (`integrity`, `negative_cursor`, `cursor_behind_rows`, `rows_without_cursor`,
        /// `unknown_collection_in_outbox`, `outbox_order`).
        public var code: String
        /// What is wrong.
        public var message: String

        /// The message.
        public var description: String { message }
    }

    /// Every problem found; empty when the store is healthy.
    public var problems: [Problem]
    /// Local writes waiting in the outbox.
    public var pendingCount: Int
    /// Refused writes kept for the app.
    public var rejectedCount: Int
    /// The number of spaces with a cursor.
    public var spaceCount: Int

    /// Whether nothing is wrong.
    public var isHealthy: Bool { problems.isEmpty }
}

import FerryCore
import Foundation

/// A local write the server refused. It left the outbox (it is never retried) and stays here for the app to show.
public struct StoreRejection: Sendable, Hashable {
    /// The refused mutation, as it was pushed.
    public var mutation: Mutation
    /// The server's machine code (`unknown_field`, `forbidden_space`, …).
    public var code: String
    /// The server's message.
    public var message: String
    /// When the device learned of the refusal.
    public var rejectedAt: Date

    /// Creates a rejection.
    public init(mutation: Mutation, code: String, message: String, rejectedAt: Date) {
        self.mutation = mutation
        self.code = code
        self.message = message
        self.rejectedAt = rejectedAt
    }
}

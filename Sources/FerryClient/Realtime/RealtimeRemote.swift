import FerryCore
import Foundation

/// The server's realtime stream as the ``SyncEngine`` needs it; ``SyncClient`` is the real one.
public protocol RealtimeRemote: Sendable {
    /// Opens `GET /sync/v1/stream`, hands every message to `onMessage` in order, and returns how the stream closed.
    ///
    /// Throws when no stream could be opened: a ``RemoteError`` with the server's reason (`bad_jwt` after a refresh,
    /// `device_revoked`, `too_many_streams`, …) or a network error.
    func openStream(_ onMessage: @escaping @Sendable (StreamMessage) async -> Void) async throws -> StreamClosure
}

/// How an open stream ended.
public struct StreamClosure: Sendable, Hashable, CustomStringConvertible {
    /// The close code the server sent, `nil` when the connection dropped without one.
    public var code: Int?
    /// The server's reason, if any.
    public var reason: String?

    /// The access token expired: reconnect with a fresh one, at once.
    public static let tokenExpiredCode = 4001
    /// The session ended or the device was revoked: this session cannot stream again.
    public static let sessionEndedCode = 4003

    /// Creates a closure.
    public init(code: Int?, reason: String? = nil) {
        self.code = code
        self.reason = reason
    }

    /// Whether the server closed the stream because the access token expired.
    public var isTokenExpired: Bool { code == Self.tokenExpiredCode }
    /// Whether the server closed the stream because the session ended.
    public var isSessionEnded: Bool { code == Self.sessionEndedCode }
    /// Whether the server closed the stream because it shuts down (1001 "going away", or 1012 "service restart"):
    /// every device of the instance reconnects, so each waits a random moment first.
    public var isServerGoingAway: Bool { code == 1001 || code == 1012 }

    public var description: String {
        guard let code else { return "connection lost" }
        return reason.map { "closed (\(code): \($0))" } ?? "closed (\(code))"
    }
}

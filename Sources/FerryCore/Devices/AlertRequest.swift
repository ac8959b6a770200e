import Foundation

/// The body of `POST /sync/v1/notifications`: a visible notification to the caller's other devices, or to the devices
/// of a space's members.
///
/// In an end-to-end encrypted space the server never sees the text: the app seals it with the space's key (as it seals
/// record fields) into ``sealed``, and a Notification Service Extension on each device opens it; ``placeholder`` is what
/// shows when it cannot.
public struct AlertRequest: Sendable, Hashable, Codable {
    /// The space whose members' devices receive it; `nil` for the caller's own other devices.
    public var space: UUID?
    /// The title, in clear; refused in an encrypted space.
    public var title: String?
    /// The text, in clear; refused in an encrypted space.
    public var body: String?
    /// Groups notifications in Notification Center (`thread-id`).
    public var thread: String?
    /// The number on the app's icon.
    public var badge: Int?
    /// The title and text sealed with the space's key, for an encrypted space.
    public var sealed: String?
    /// What an encrypted space's notification shows before the extension opens it (or if it cannot). [default: "New activity"]
    public var placeholder: String?

    /// Creates a request.
    public init(
        space: UUID? = nil, title: String? = nil, body: String? = nil, thread: String? = nil, badge: Int? = nil, sealed: String? = nil,
        placeholder: String? = nil
    ) {
        self.space = space
        self.title = title
        self.body = body
        self.thread = thread
        self.badge = badge
        self.sealed = sealed
        self.placeholder = placeholder
    }
}

/// The answer to `POST /sync/v1/notifications`: how many devices APNs accepted it for.
public struct AlertReply: Sendable, Hashable, Codable {
    /// Devices APNs accepted the notification for.
    public var sent: Int
    /// Devices it could not be sent to now (APNs down or refusing); alerts are not queued.
    public var failed: Int
    /// Devices whose token APNs rejected; their tokens are cleared.
    public var tokensCleared: Int

    /// Creates a reply.
    public init(sent: Int, failed: Int, tokensCleared: Int) {
        self.sent = sent
        self.failed = failed
        self.tokensCleared = tokensCleared
    }
}

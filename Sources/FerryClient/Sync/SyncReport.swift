import Foundation

/// What one sync did: the numbers the field-service app asks to watch (requests per launch, records processed = records changed).
public struct SyncReport: Sendable, Hashable, Codable {
    /// HTTP requests made (pushes and pulls).
    public var requests = 0
    /// Mutations sent to the server.
    public var pushed = 0
    /// Changes received from the server.
    public var pulled = 0
    /// Local rows whose merge changed something.
    public var applied = 0
    /// Mutations the server refused (moved to the store's rejections).
    public var rejected = 0
    /// Spaces reset because the server asked.
    public var resetSpaces = 0
    /// Space keys this device sealed to other trusted devices, or made (a new encrypted space, a rotation).
    public var sealedKeys = 0
    /// Encrypted spaces this sync could not read or write because their key is not sealed to this device
    /// (yet): a pending device, or a key another device has not handed out. Their changes wait, nothing is lost.
    public var lockedSpaces = 0
    /// Whether the push waited because the session is bound to no device yet (run ``PostLoginSync``); the pull ran.
    public var waitingForDeviceRegistration = false
    /// Files uploaded (attached on this device) and downloaded (named by pulled records).
    public var blobsUploaded = 0
    public var blobsDownloaded = 0
    /// Blob bytes sent and received.
    public var blobBytesSent: Int64 = 0
    public var blobBytesReceived: Int64 = 0
    /// The triggers this sync answered, by name.
    public var triggers: [String] = []
    /// When it started.
    public var startedAt: Date?
    /// When it finished.
    public var finishedAt: Date?

    /// An empty report.
    public init() {}
}

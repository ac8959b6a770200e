import FerryCore

/// Why the last sync failed: a stable ``code``, a message, and whether the engine retries on its own.
public struct SyncError: FerryError, Hashable {
    /// The stable machine code (the server's, or one of the client's such as `network_unavailable`).
    public var code: ErrorCode
    /// What went wrong, in a sentence a person can act on.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// Whether the failure is temporary (network, timeout, 5xx, rate limit): the engine backs off and retries.
    public var isRetryable: Bool
    /// How long the server asked to wait before retrying, if it said (the engine waits at least this long).
    public var retryAfter: Duration?

    /// Creates an error.
    public init(code: ErrorCode, message: String, status: Int? = nil, isRetryable: Bool, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.isRetryable = isRetryable
        self.retryAfter = retryAfter
    }

    /// The sync error `error` stands for.
    public init(_ error: any Error) {
        switch error {
        case let error as SyncError:
            self = error
        case let error as RemoteError:
            let retryable = error.isOffline || error.isRateLimited || error.status == 408
            self.init(code: error.code, message: error.message, status: error.status, isRetryable: retryable, retryAfter: error.retryAfter)
        case let error as AuthError:
            self.init(code: error.code, message: error.message, status: error.status, isRetryable: false)
        case let error as StoreError:
            self.init(code: error.code, message: error.message, isRetryable: false)
        case is CancellationError:
            self.init(code: .syncCancelled, message: "The sync was cancelled.", isRetryable: true)
        default:
            self.init(code: .unexpectedResponse, message: "\(error)", isRetryable: false)
        }
    }
}

extension ErrorCode {
    /// The sync stopped because its task was cancelled (the engine stopped).
    public static let syncCancelled: ErrorCode = "sync_cancelled"
    /// The server answered a push without acknowledging any mutation, so the outbox cannot advance.
    public static let pushNotAcknowledged: ErrorCode = "push_not_acknowledged"
    /// The space is end-to-end encrypted and this device holds no key for it (yet).
    public static let spaceLocked: ErrorCode = "space_locked"
    /// A blob's file is not on this device and could not be downloaded (or its cached copy is damaged).
    public static let blobUnavailable: ErrorCode = "blob_unavailable"
}

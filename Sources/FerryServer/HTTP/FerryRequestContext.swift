import Hummingbird
import Synchronization
import NIOCore

/// A context that knows its connection: Ferry's own, and the authenticated one derived from it.
protocol FerryChanneledContext: RequestContext {
    var channel: any Channel { get }
}

extension FerryRequestContext: FerryChanneledContext {}

/// The per-request context every Ferry route receives.
public struct FerryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    /// The id that ties this request's log lines and its `X-Request-Id` response header together.
    public var requestID: String
    /// The socket peer's address (a proxy's, when the server sits behind one).
    public var peerAddress: IPAddress?
    /// The client's IP address: the socket peer, or the client a trusted proxy names (``ClientAddressMiddleware``).
    public var clientAddress: String
    /// What per-client rate limits count against: ``IPAddress/rateLimitKey`` of the client's address.
    public var rateLimitKey: String
    /// The verified caller, set by the ``Authenticator`` on authenticated route groups.
    var caller: SyncCaller?
    /// The caller of a `/rest/v1` request, set by the ``TableAuthenticator``.
    var tableCaller: TableCaller?
    /// The operator of a `/console/api` request, set by ``ConsoleSessionMiddleware``.
    var operatorSession: OperatorService.Session?
    /// The connection, whose writability paces streamed responses (``BlobResponse``).
    let channel: any Channel
    /// Whether the request is a WebSocket upgrade, and where `GET /sync/v1/stream` leaves the stream it opened for it.
    let streamUpgrade = StreamUpgrade()
    /// The account changes the hub had heard when a stream request began, before it was authenticated
    /// (``StreamAdmission/Mark``): the stream starts current only if none came since
    /// (``RealtimeHub/open(userID:deviceID:spaces:changesAtStart:)``).
    var accountChangesAtStart: Int?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = ""
        self.channel = source.channel
        let peer = source.channel.remoteAddress?.ipAddress
        self.peerAddress = peer.flatMap(IPAddress.init)
        self.clientAddress = peer ?? "unknown"
        self.rateLimitKey = peerAddress?.rateLimitKey ?? clientAddress
    }
}

extension FerryRequestContext {
    /// Request contexts alive in this process (one lives as long as any copy of it): what a leak test watches.
    package static var alive: Int { StreamUpgrade.alive.load(ordering: .relaxed) }
}

/// A request's WebSocket upgrade: set by the connection (``UpgradableHTTPChannel``) when the request asks for one, and
/// given the stream the route opened, which the connection then serves. Every copy of a context shares it.
final class StreamUpgrade: Sendable {
    static let alive = Atomic<Int>(0)
    private struct State {
        var isUpgrading = false
        var stream: OpenStream?
    }
    private let state = Mutex(State())

    init() {
        Self.alive.add(1, ordering: .relaxed)
    }

    deinit {
        Self.alive.subtract(1, ordering: .relaxed)
    }

    /// Whether the request arrived as a WebSocket upgrade (``UpgradableHTTPChannel``), not as a plain request.
    var isUpgrading: Bool { state.withLock { $0.isUpgrading } }

    func markUpgrading() {
        state.withLock { $0.isUpgrading = true }
    }

    /// Hands over the stream the route opened.
    func hand(_ stream: OpenStream) {
        state.withLock { $0.stream = stream }
    }

    /// The stream handed over, once.
    func take() -> OpenStream? {
        state.withLock { state in
            defer { state.stream = nil }
            return state.stream
        }
    }
}

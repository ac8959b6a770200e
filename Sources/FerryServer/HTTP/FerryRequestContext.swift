import Hummingbird
import Synchronization
public import HummingbirdWebSocket
import NIOCore

/// A context that knows its connection: Ferry's own, and the authenticated one derived from it.
protocol FerryChanneledContext: RequestContext {
    var channel: any Channel { get }
}

extension FerryRequestContext: FerryChanneledContext {}

/// The per-request context every Ferry route receives.
public struct FerryRequestContext: RequestContext, WebSocketRequestContext {
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
    /// Where `GET /sync/v1/stream` leaves its WebSocket handler for the upgrade.
    public var webSocket: WebSocketHandlerReference<FerryRequestContext> { webSocketSlot.reference }
    private let webSocketSlot = WebSocketSlot()
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

    /// Lets go of the WebSocket handler reference once the stream runs. The router keeps the handler together with a
    /// copy of this context inside the reference, which this context holds: a cycle that kept every stream's context,
    /// and with it its connection's channel, after the stream ended.
    func releaseWebSocket() {
        webSocketSlot.release()
    }

    /// Lets go of the WebSocket handler reference when the connection closes, if the stream never started.
    func releaseWebSocketWhenClosed() {
        let slot = webSocketSlot
        channel.closeFuture.whenComplete { _ in slot.release() }
    }
}

extension FerryRequestContext {
    /// Request contexts alive in this process (one lives as long as any copy of it): what a leak test watches.
    package static var alive: Int { WebSocketSlot.alive.load(ordering: .relaxed) }
}

/// The context's WebSocket handler reference, until the stream it served has started.
private final class WebSocketSlot: Sendable {
    static let alive = Atomic<Int>(0)
    private let slot = Mutex<WebSocketHandlerReference<FerryRequestContext>?>(WebSocketHandlerReference())

    init() {
        Self.alive.add(1, ordering: .relaxed)
    }

    deinit {
        Self.alive.subtract(1, ordering: .relaxed)
    }

    /// The reference; a fresh, empty one once released (nothing reads it then).
    var reference: WebSocketHandlerReference<FerryRequestContext> {
        slot.withLock { $0 } ?? WebSocketHandlerReference()
    }

    func release() {
        slot.withLock { $0 = nil }
    }
}

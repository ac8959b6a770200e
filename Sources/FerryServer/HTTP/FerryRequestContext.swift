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
    public let webSocket = WebSocketHandlerReference<FerryRequestContext>()
    /// The account changes heard when the request began, before it was authenticated: a stream opened by it starts
    /// current only if none came since (``RealtimeHub/open(userID:deviceID:spaces:changesAtStart:)``).
    let accountChangesAtStart = RealtimeHub.accountChangesHeard.load(ordering: .sequentiallyConsistent)

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

import Hummingbird
import NIOCore

/// The per-request context every Ferry route receives.
public struct FerryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    /// The id that ties this request's log lines and its `X-Request-Id` response header together.
    public var requestID: String
    /// The client's IP address as the socket sees it, for per-address rate limits.
    public var clientAddress: String
    /// The verified caller, set by ``SyncAuthenticationMiddleware`` on authenticated route groups.
    var caller: SyncCaller?
    /// How long a request may wait on the database (``ServerConfiguration/requestDeadline``), set by the router.
    var deadline: Duration = .seconds(10)

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = ""
        self.clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

import Hummingbird

/// The per-request context every Ferry route receives.
public struct FerryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    /// The id that ties this request's log lines and its `X-Request-Id` response header together.
    public var requestID: String

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = ""
    }
}

import FerryCore
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// HTTP/1.1 with the WebSocket upgrade of `GET /sync/v1/stream`, plus what that upgrade path lacks for a first request.
///
/// Until the first request's head is parsed, hummingbird-websocket's pipeline has neither an idle timeout nor an error
/// handler: a client sending half a head, or a head that does not parse (`HTTP/9.9`, two `Content-Length`s, a TLS
/// ClientHello), would hold the connection for ever. ``FirstRequestGuard`` answers such a head `400` (or `431` when
/// too large) and closes, closes a connection whose first head is not complete within the idle timeout, and steps
/// aside once the head is parsed: later requests are timed and answered by Hummingbird's own handlers, and an
/// upgraded stream by its heartbeats.
struct UpgradableHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value
    let upgrade: HTTP1WebSocketUpgradeChannel
    let headTimeout: TimeAmount

    static func builder<Router: HTTPResponderBuilder>(
        router: Router, idleTimeout: Duration, webSocket: WebSocketServerConfiguration
    ) -> HTTPServerBuilder where Router.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = router.buildResponder()
        return HTTPServerBuilder { responder in
            UpgradableHTTPChannel(
                upgrade: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: .init(idleTimeout: TimeAmount(idleTimeout)), ws: webSocket)
                ),
                headTimeout: TimeAmount(idleTimeout)
            )
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        upgrade.setup(channel: channel, logger: logger).flatMapThrowing { [headTimeout] value in
            // Right behind the decoder: it sees the first head (for an upgrade too) and every error the decoder raises.
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: headTimeout), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        // A connection the guard closed never negotiated ("Error handling upgrade result"): that is the client's doing,
        // so nothing is logged for it once closed.
        let channel = ObjectIdentifier(value.channel)
        let quiet = Logger(label: logger.label) { _ in UnlessClosedByGuard(base: logger.handler, channel: channel) }
        await upgrade.handle(value: value, logger: quiet)
        FirstRequestGuard.closed.withLock { _ = $0.remove(channel) }
    }
}

/// Sits behind the HTTP decoder of a new connection while its first request head is awaited: closes the connection
/// unless the head arrives within `timeout`, answers a head the decoder refuses with a JSON error and
/// `Connection: close` (as Hummingbird does for every later request), and removes itself once a head arrives.
final class FirstRequestGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The connections a guard closed (answered, or timed out), until their handler has run.
    static let closed = Mutex<Set<ObjectIdentifier>>([])

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var isAnswered = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            Self.closed.withLock { _ = $0.insert(ObjectIdentifier(channel)) }
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let isHead = if case .head = unwrapInboundIn(data) { true } else { false }
        context.fireChannelRead(data)
        if isHead, !isAnswered {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isAnswered else { return }
        isAnswered = true
        Self.closed.withLock { _ = $0.insert(ObjectIdentifier(context.channel)) }
        let (status, message) = Self.answer(to: error)
        let body = JSONValue.object([
            "code": .number(Double(status.code)), "error_code": .string(ErrorCode.badRequest.rawValue), "msg": .string(message),
        ]).jsonText
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The status and message for a head the decoder refused.
    static func answer(to error: any Error) -> (HTTPResponseStatus, String) {
        switch error as? HTTPParserError {
        case .headerOverflow?:
            (.requestHeaderFieldsTooLarge, "The request's head (request line and headers) is too large.")
        case .some:
            (.badRequest, "The request is not valid HTTP/1.1 (\(error)); the connection is closed.")
        case nil:
            (.badRequest, "The request could not be read; the connection is closed.")
        }
    }
}

/// Logs as `base` does, except for a connection ``FirstRequestGuard`` closed.
struct UnlessClosedByGuard: LogHandler {
    var base: any LogHandler
    let channel: ObjectIdentifier

    func log(event: LogEvent) {
        guard !FirstRequestGuard.closed.withLock({ $0.contains(channel) }) else { return }
        base.log(event: event)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }
}

import FerryCore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import Synchronization

/// HTTP/1.1 with the WebSocket upgrade of `GET /sync/v1/stream`, served without a task per stream.
///
/// An upgrade request goes through the router like any other (authenticated, admitted, and the stream opened by its
/// route, ``StreamRoutes``). Admitted, the connection switches protocols and a ``StreamChannelHandler`` serves the
/// stream on the event loop; the connection's task ends there. Refused, the router's answer (`401`, `429`, `503` with
/// its JSON body and `Retry-After`) is the answer to the upgrade, and the connection closes: a client learns why at
/// once, without asking again.
///
/// Until the first request's head is parsed, NIO's upgrade pipeline has neither an idle timeout nor an error handler:
/// a client sending half a head, or a head that does not parse (`HTTP/9.9`, two `Content-Length`s, a TLS
/// ClientHello), would hold the connection for ever. ``FirstRequestGuard`` answers such a head `400` (or `431` when
/// too large) and closes, closes a connection whose first head is not complete within the idle timeout, and steps
/// aside once the head is parsed: later requests are timed and answered by Hummingbird's own handlers, and a stream
/// by its heartbeats.
struct UpgradableHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    /// How a connection's first request turned out.
    enum UpgradeResult: Sendable {
        /// A stream, now served by its channel handler.
        case stream
        /// Plain HTTP.
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade the router refused, with its answer.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, Refusal)
    }

    /// The router's answer to an upgrade request it refused.
    struct Refusal: Sendable {
        var head = HTTPResponse(status: .badRequest)
        var body = ByteBuffer()
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    typealias StreamResponder = @Sendable (Request, FerryRequestContext) async throws -> Response

    let responder: HTTPChannelHandler.Responder
    let streamResponder: StreamResponder
    let idleTimeout: Duration
    let heartbeat: StreamHeartbeat
    /// The largest frame a client may send (it sends only control frames).
    static let maxFrameSize = 1 << 12

    static func builder<Router: HTTPResponderBuilder>(
        router: Router, idleTimeout: Duration, heartbeat: StreamHeartbeat
    ) -> HTTPServerBuilder where Router.Responder.Context == FerryRequestContext {
        let streamResponder = router.buildResponder()
        return HTTPServerBuilder { responder in
            UpgradableHTTPChannel(
                responder: responder, streamResponder: { try await streamResponder.respond(to: $0, context: $1) },
                idleTimeout: idleTimeout, heartbeat: heartbeat
            )
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgrade = UpgradeAttempt()
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: Self.maxFrameSize,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask { try await self.admit(head, on: channel, logger: logger, into: upgrade) }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let stream = upgrade.takeStream() else { throw ChannelError.inappropriateOperationForState }
                        try channel.pipeline.syncOperations.addHandler(StreamChannelHandler(stream: stream, heartbeat: heartbeat))
                        return UpgradeResult.stream
                    }
                }
            )
            let serverUpgrade = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)
                        )
                        if let refusal = upgrade.refusal { return UpgradeResult.refused(http, refusal) }
                        if let head = upgrade.requestedHead {
                            // An `Upgrade` NIO's upgrader did not take (another protocol, no `Connection: Upgrade` or
                            // no `Sec-WebSocket-Key`): NIO passes on only the rest of that request, so its head is
                            // given back here and the request is served as plain HTTP, as if the header were absent.
                            try channel.pipeline.syncOperations.context(handlerType: NIOTypedHTTPServerUpgradeHandler<UpgradeResult>.self)
                                .fireChannelRead(NIOAny(HTTPServerRequestPart.head(head)))
                        }
                        return UpgradeResult.notUpgraded(http)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: serverUpgrade)
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // FirstRequestGuard, then Hummingbird
            configuration.enableResponseHeaderValidation = false  // Swift HTTP Types validate them already
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            // Right behind the decoder: it sees the first head (for an upgrade too) and every error the decoder raises.
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(timeout: TimeAmount(idleTimeout), upgrade: upgrade), position: .after(decoder))
            return Value(upgradeResult: result, channel: channel)
        }
    }

    /// Runs an upgrade request through the router: the headers of the `101` when its route opened a stream, `nil`
    /// (the router's answer kept for the reply) when it did not.
    private func admit(_ head: HTTPRequestHead, on channel: any Channel, logger: Logger, into upgrade: UpgradeAttempt) async throws -> HTTPHeaders? {
        let request = Request(head: try HTTPRequest(head, secure: false, splitCookie: false), body: .init(buffer: .init()))
        var logger = logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())  // as Hummingbird gives every request
        let context = FerryRequestContext(source: .init(channel: channel, logger: logger))
        context.streamUpgrade.markUpgrading()
        var refusal = Refusal()
        do {
            let response = try await streamResponder(request, context)
            if response.status == .ok, let stream = context.streamUpgrade.take() {
                upgrade.admitted(stream)
                return HTTPHeaders()
            }
            refusal.head = response.head
            let body = BufferedBody()
            try await response.body.write(body)
            refusal.body = body.buffer
        } catch {
            logger.debug("stream upgrade not answered", metadata: ["ferry.error": "\(error)"])
        }
        upgrade.refused(refusal)
        return nil
    }

    func handle(value: Value, logger: Logger) async {
        // A connection the guard closed never negotiated: that is the client's doing, so nothing is logged for it.
        let channel = ObjectIdentifier(value.channel)
        defer { FirstRequestGuard.closed.withLock { _ = $0.remove(channel) } }
        do {
            switch try await value.upgradeResult.get() {
            case .stream:
                break  // served by its channel handler from now on
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let refusal):
                try await http.executeThenClose { _, outbound in
                    var head = refusal.head
                    head.headerFields[.connection] = "close"
                    head.headerFields[.contentLength] = "\(refusal.body.readableBytes)"
                    try await outbound.write(contentsOf: [.head(head), .body(refusal.body), .end(nil)])
                }
            }
        } catch {
            guard !FirstRequestGuard.closed.withLock({ $0.contains(channel) }) else { return }
            logger.debug("connection ended before its first request was answered", metadata: ["ferry.error": "\(error)"])
        }
    }
}

/// What a connection's upgrade request came to, between the router's answer and the pipeline's.
final class UpgradeAttempt: Sendable {
    private struct State {
        var requestedHead: HTTPRequestHead?
        var stream: OpenStream?
        var refusal: UpgradableHTTPChannel.Refusal?
    }
    private let state = Mutex(State())

    /// The first request's head, when it asked for an upgrade (an `Upgrade` header).
    var requestedHead: HTTPRequestHead? { state.withLock { $0.requestedHead } }
    func requested(_ head: HTTPRequestHead) { state.withLock { $0.requestedHead = head } }

    func admitted(_ stream: OpenStream) { state.withLock { $0.stream = stream } }
    func refused(_ refusal: UpgradableHTTPChannel.Refusal) { state.withLock { $0.refusal = refusal } }
    func takeStream() -> OpenStream? {
        state.withLock { state in
            defer { state.stream = nil }
            return state.stream
        }
    }
    var refusal: UpgradableHTTPChannel.Refusal? { state.withLock { $0.refusal } }
}

/// Collects a response body in one buffer (a refusal's small JSON error).
private final class BufferedBody: ResponseBodyWriter {
    var buffer = ByteBuffer()
    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.buffer.writeBuffer(&buffer)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
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

    private let upgrade: UpgradeAttempt?

    init(timeout: TimeAmount, upgrade: UpgradeAttempt? = nil) {
        self.timeout = timeout
        self.upgrade = upgrade
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
        let head: HTTPRequestHead? = if case .head(let head) = unwrapInboundIn(data) { head } else { nil }
        if let head, head.headers.contains(name: "Upgrade") { upgrade?.requested(head) }
        let isHead = head != nil
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

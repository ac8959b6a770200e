import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// HTTP/1.1 with the WebSocket upgrade of `GET /sync/v1/stream`, plus the header timeout that upgrade path lacks.
///
/// hummingbird-websocket adds its idle-timeout handler only once a request turned out not to be an upgrade, that is
/// after its head arrived; a client sending half a header would hold the connection forever. ``FirstHeadDeadline``
/// closes a connection whose first head is not complete within the idle timeout, then steps aside: later requests
/// are timed by Hummingbird's own handler, and an upgraded stream by its heartbeats.
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
        let headTimeout = headTimeout
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstHeadDeadline(timeout: headTimeout))
        }.flatMap { [upgrade] in
            upgrade.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await upgrade.handle(value: value, logger: logger)
    }
}

/// Closes the connection unless the first request head (up to its blank line) arrives within `timeout`, then
/// removes itself. It only scans bytes for CR LF CR LF; parsing stays with the HTTP decoder behind it.
final class FirstHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// How many bytes of CR LF CR LF the input ends with so far.
    private var matched = 0

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let isComplete = buffer.readableBytesView.contains { byte in
            let expected: UInt8 = matched % 2 == 0 ? 13 : 10
            matched = byte == expected ? matched + 1 : (byte == 13 ? 1 : 0)
            return matched == 4
        }
        context.fireChannelRead(data)
        if isComplete {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

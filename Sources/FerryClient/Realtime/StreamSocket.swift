import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import WSClient
@_spi(WSInternal) import WSCore

/// The realtime stream's WebSocket connection: WSClient's connection, with an upgrade that always ends.
///
/// WSClient's own channel leaves the socket open when the server declines the upgrade (a refused stream: `401`,
/// `429`, `503` in a connect storm), so each refusal held a socket until the process ended; and nothing bounds its
/// wait for the answer on a connection that stays open. Here a declined upgrade closes the socket and throws, and so
/// does an upgrade not answered within ``upgradeTimeout``; a connection closed on the way throws at once.
struct StreamSocket: ClientConnectionChannel {
    enum Upgrade: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case declined
    }

    /// The connection and how its upgrade ends.
    struct Value: Sendable {
        let channel: any Channel
        let upgrade: EventLoopFuture<Upgrade>
        let answer: AnswerHead
    }

    /// The upgrade ended without a stream.
    enum Failure: Error, Equatable {
        /// The server answered without upgrading: it refused the stream, with this status and `Retry-After` (seconds).
        case declined(status: Int, retryAfter: Int?)
        /// The connection closed, or no answer came within ``upgradeTimeout``.
        case noAnswer
    }

    struct Context: WebSocketContext {
        let logger: Logger
    }

    /// How long the server may take to answer the upgrade: it admits or refuses at once (a bounded number of stream
    /// requests at a time), so a longer wait is a connection nobody serves.
    static let upgradeTimeout: TimeAmount = .seconds(10)

    /// The `Host` header: the server's name or address, and its port when not the scheme's.
    let host: String
    /// The name TLS presents (SNI); `nil` for an address, which SNI cannot carry.
    let serverName: String?
    let path: String
    let headers: HTTPHeaders
    let configuration: WebSocketClientConfiguration
    let tls: NIOSSLContext?
    let handler: WebSocketDataHandler<Context>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            var headers = headers
            headers.replaceOrAdd(name: "Host", value: host)
            let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                maxFrameSize: configuration.maxFrameSize,
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                    }
                }
            )
            let upgrade = NIOTypedHTTPClientUpgradeConfiguration(
                upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.declined) }
            )
            var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrade)
            pipeline.leftOverBytesStrategy = .forwardBytes
            if let tls {
                try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName), position: .first)
            }
            let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
            let answer = AnswerHead()
            try channel.pipeline.syncOperations.addHandler(answer, position: .after(decoder))
            // Whichever comes first: the upgrade's end, the connection's close, or the timeout.
            let ends = channel.eventLoop.makePromise(of: Upgrade.self)
            ends.completeWith(upgraded)
            channel.closeFuture.whenComplete { _ in ends.fail(Failure.noAnswer) }
            let timeout = channel.eventLoop.scheduleTask(in: Self.upgradeTimeout) { ends.fail(Failure.noAnswer) }
            ends.futureResult.whenComplete { _ in timeout.cancel() }
            return Value(channel: channel, upgrade: ends.futureResult, answer: answer)
        }
    }

    func handle(value: Value, logger: Logger) async throws -> WebSocketCloseFrame? {
        let upgrade: Upgrade
        do {
            upgrade = try await value.upgrade.get()
        } catch {
            try? await value.channel.close()
            throw error
        }
        switch upgrade {
        case .declined:
            let head = try? await value.channel.eventLoop.submit { value.answer.head }.get()
            try? await value.channel.close()
            throw Failure.declined(status: Int(head?.status.code ?? 0), retryAfter: head?.headers.first(name: "Retry-After").flatMap { Int($0) })
        case .upgraded(let socket):
            return try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(
                    extensions: [], autoPing: configuration.autoPing, closeTimeout: configuration.closeTimeout,
                    validateUTF8: configuration.validateUTF8, maxFrameSize: configuration.maxFrameSize
                ),
                asyncChannel: socket, context: Context(logger: logger), handler: handler
            )
        }
    }
}

/// Notes the head of the server's answer to the upgrade request, so a refusal's status and `Retry-After` are known
/// without asking again, then leaves the pipeline (an upgraded one carries WebSocket bytes, not HTTP parts). Runs on
/// the channel's event loop only.
final class AnswerHead: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private(set) var head: HTTPResponseHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let answer) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        head = answer
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

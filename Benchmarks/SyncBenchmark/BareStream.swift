import FerryCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// One bare realtime stream of ``RealtimeListenersRun``: a socket and a handler on an event loop, with no task, that
/// reads each message's type and sequence number and skips the changes it carries.
///
/// The SDK's stream serves one app (a task waiting on its socket, every message parsed whole); ten thousand of them
/// beside the server took most of this machine's two cores, which the server's deliveries were measured on. Here the
/// listeners' share is the socket's and the frame's. It reopens as the engine's stream does: after a random 0–2 s
/// when the server goes away (1001, 1012), after `Retry-After` times 1 to 2 when refused, else after 250–500 ms. Its
/// access token is never refreshed: a run lasts less than the token's hour, and a stream whose token or session ended
/// (4001, 4003, a refusal with 401 or 403) gives up, saying so, rather than asking again forever.
final class BareStream: Sendable {
    /// Where streams connect, and what their upgrade request carries.
    struct Target: Sendable {
        let host: String
        let port: Int
        let path: String
        let headers: HTTPHeaders

        init(server: URL, accessToken: String, apiKey: String) throws {
            guard let host = server.host, let port = server.port, server.scheme == "http" else {
                throw BenchmarkError("bare streams need an http:// server URL with a port, not \(server)")
            }
            self.host = host
            self.port = port
            path = server.path.hasSuffix("/") ? server.path + "sync/v1/stream" : server.path + "/sync/v1/stream"
            headers = HTTPHeaders([
                ("Host", "\(host):\(port)"), ("Authorization", "Bearer \(accessToken)"), ("apikey", apiKey),
                ("Origin", "http://\(host)"),
            ])
        }
    }

    /// What a stream reports, on its event loop.
    struct Events: Sendable {
        let opened: @Sendable () -> Void
        /// An open stream closed (the server's restart, a lost connection).
        let closed: @Sendable () -> Void
        /// A `change` message: its space's sequence number.
        let poked: @Sendable (Int64) -> Void
    }

    private let target: Target
    private let eventLoop: any EventLoop
    private let events: Events
    private let isStopped = Atomic<Bool>(false)
    private static let reportedEnd = Atomic<Bool>(false)

    init(target: Target, eventLoop: any EventLoop, events: Events) {
        self.target = target
        self.eventLoop = eventLoop
        self.events = events
    }

    /// Opens the stream, and again each time it ends, until ``stop()``.
    func start() {
        eventLoop.execute { self.open() }
    }

    /// No further attempts; an open stream stays open until the process ends.
    func stop() {
        isStopped.store(true, ordering: .relaxed)
    }

    private func open() {
        guard !isStopped.load(ordering: .relaxed) else { return }
        let attempt = Attempt()
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel, attempt) }
            }
            .connect(host: target.host, port: target.port)
            .whenComplete { result in
                switch result {
                case .failure:
                    self.retry(after: .seconds(1) * Double.random(in: 1...2))
                case .success(let channel):
                    channel.closeFuture.whenComplete { _ in self.ended(attempt) }
                }
            }
    }

    /// The HTTP/1.1 upgrade to a WebSocket, its answer noted, and the stream's handler once upgraded.
    private func configure(_ channel: any Channel, _ attempt: Attempt) throws {
        let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(maxFrameSize: 1 << 16) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(BareStreamHandler(attempt: attempt, events: self.events))
                return true
            }
        }
        let upgrade = NIOTypedHTTPClientUpgradeConfiguration(
            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: target.headers),
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(false) }
        )
        let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
            configuration: .init(upgradeConfiguration: upgrade)
        )
        let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
        try channel.pipeline.syncOperations.addHandler(UpgradeAnswer(attempt: attempt), position: .after(decoder))
        // The server admits or refuses at once; an upgrade unanswered for 10 s is a connection nobody serves.
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
        upgraded.whenComplete { result in
            timeout.cancel()
            if case .success(true) = result {
                attempt.isOpen = true
                self.events.opened()
            } else {
                channel.close(promise: nil)
            }
        }
    }

    private func ended(_ attempt: Attempt) {
        if [4001, 4003].contains(attempt.closeCode) || [401, 403].contains(attempt.refusal) {
            stop()
            if !Self.reportedEnd.exchange(true, ordering: .relaxed) {
                let why = attempt.closeCode.map { "closed with \($0)" } ?? "refused with \(attempt.refusal ?? 0)"
                FileHandle.standardError.write(Data("bare streams: the session ended (\(why)); not reopening\n".utf8))
            }
            return
        }
        let delay: Duration
        if attempt.isOpen {
            events.closed()
            delay = attempt.closeCode == 1001 || attempt.closeCode == 1012
                ? .seconds(2) * Double.random(in: 0...1) : .milliseconds(250) * Double.random(in: 1...2)
        } else {
            delay = .seconds(attempt.retryAfter ?? 1) * Double.random(in: 1...2)
        }
        retry(after: delay)
    }

    private func retry(after delay: Duration) {
        guard !isStopped.load(ordering: .relaxed) else { return }
        eventLoop.scheduleTask(in: .nanoseconds(Int64(delay.seconds * 1e9))) { self.open() }
    }
}

/// One connection's outcome; touched on its event loop only.
private final class Attempt: @unchecked Sendable {
    var isOpen = false
    /// The status of an upgrade the server refused, and its `Retry-After` in seconds.
    var refusal: Int?
    var retryAfter: Int?
    /// The server's close code.
    var closeCode: UInt16?
}

/// Notes a refusal's `Retry-After`, then leaves the pipeline.
private final class UpgradeAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private let attempt: Attempt

    init(attempt: Attempt) {
        self.attempt = attempt
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            if head.status != .switchingProtocols { attempt.refusal = Int(head.status.code) }
            attempt.retryAfter = head.headers.first(name: "Retry-After").flatMap { Int($0) }
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } else {
            context.fireChannelRead(data)
        }
    }
}

/// The open stream: reports each message's sequence number, answers pings, and answers the server's close.
private final class BareStreamHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let attempt: Attempt
    private let events: BareStream.Events
    /// A message whose frames are still arriving.
    private var fragments: ByteBuffer?

    init(attempt: Attempt, events: BareStream.Events) {
        self.attempt = attempt
        self.events = events
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text where frame.fin:
            read(frame.unmaskedData)
        case .text:
            fragments = frame.unmaskedData
        case .continuation:
            var data = frame.unmaskedData
            fragments?.writeBuffer(&data)
            if frame.fin, let message = fragments {
                fragments = nil
                read(message)
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            attempt.closeCode = data.readInteger(as: UInt16.self)
            let answer = WebSocketFrame(
                fin: true, opcode: .connectionClose, maskKey: .random(), data: context.channel.allocator.buffer(capacity: 0)
            )
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in channel.close(promise: nil) }
        default:
            break
        }
    }

    private func read(_ message: ByteBuffer) {
        let poke = message.withUnsafeReadableBytes { raw in
            StreamMessage.read(raw.assumingMemoryBound(to: UInt8.self), carrying: false)
        }
        if case .change(_, let seq, _) = poke { events.poked(seq) }
    }
}

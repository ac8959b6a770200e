import FerryCore
import Foundation
import NIOCore
import NIOWebSocket
import Prometheus

/// Serves one open stream on its connection's event loop, with no task of its own: sends `ready`, then writes its
/// mailbox's batches as WebSocket text messages whenever the mailbox has some and the connection can take them,
/// answers the client's pings, pings it in its event loop's heartbeat round, and closes it with the right code.
///
/// A task per stream kept, for as long as the stream lived, the memory its deepest call had grown; here a stream is
/// its channel, this handler, its mailbox and two timers. A task runs only for a session check
/// (``OpenStream/recheck()``), and ends with it.
final class StreamChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    static let tokenExpired = WebSocketErrorCode.unknown(4001)
    static let sessionEnded = WebSocketErrorCode.unknown(4003)
    /// How long the client may take to answer the server's close frame before the connection is closed.
    static let closeTimeout: TimeAmount = .seconds(3)

    private let stream: OpenStream
    private let heartbeat: StreamHeartbeat
    private var context: ChannelHandlerContext?
    /// The frame encoder's context: a carried message, a frame already (``CarriedMessage/frame``), is written from it.
    private var encoder: ChannelHandlerContext?
    /// Runs ``drain()`` on this stream's event loop: what the mailbox calls when it has something.
    private var waker: StreamWaker?
    private var expiry: Scheduled<Void>?
    private var closing: Scheduled<Void>?
    private var awaitsPong = false
    /// A session check runs: batches wait for it.
    private var isChecking = false
    /// The server's close frame is sent (or the client's answered): nothing more is written.
    private var isClosing = false
    private var checkDue: NIODeadline
    private var retryDue = NIODeadline.now()

    init(stream: OpenStream, heartbeat: StreamHeartbeat) {
        self.stream = stream
        self.heartbeat = heartbeat
        self.checkDue = Self.nextCheck(after: .now())
    }

    /// The event loop the stream is served on, once added to its pipeline.
    var eventLoop: (any EventLoop)? { context?.eventLoop }

    /// Each stream's interval is drawn between 1 and 1.5 times ``StreamService/recheckInterval``: streams that opened
    /// together (a restart's reconnections) do not all check on the same write.
    private static func nextCheck(after now: NIODeadline) -> NIODeadline {
        now + TimeAmount(StreamService.recheckInterval * Double.random(in: 1...1.5))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        encoder = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        waker = StreamWaker(eventLoop: context.eventLoop) { handler.value.drain() }
        heartbeat.join(self, on: context.eventLoop)
        send(StreamMessage.ready(expiresAt: stream.expiresAt).jsonText, context: context)
        context.flush()
        let mailbox = stream.slot.mailbox
        expiry = context.eventLoop.scheduleTask(in: .milliseconds(Int64(max(0, stream.expiresAt.timeIntervalSinceNow) * 1000))) {
            mailbox.close(.tokenExpired)
        }
        drain()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(context: context)
        context.fireChannelInactive()
    }

    /// The connection is gone: the stream stops counting, and its timers stop.
    private func end(context: ChannelHandlerContext) {
        guard self.context != nil else { return }
        self.context = nil
        encoder = nil
        waker = nil
        stream.slot.mailbox.close(.clientLeft)
        stream.end()
        expiry?.cancel()
        closing?.cancel()
        heartbeat.leave(self, on: context.eventLoop)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            guard !isClosing else { return }
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            awaitsPong = false
        case .connectionClose:
            guard !isClosing else {
                context.close(promise: nil)  // the client's answer to the server's close
                return
            }
            // The client closes: answer with its code, then close the connection.
            isClosing = true
            stream.slot.mailbox.close(.clientLeft)
            var answer = context.channel.allocator.buffer(capacity: 2)
            if let code = Self.answerCode(toClose: frame.unmaskedData) { answer.writeInteger(code) }
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer))).whenComplete { _ in
                channel.close(promise: nil)
            }
        default:
            break  // clients send nothing but control frames; data is dropped
        }
    }

    /// The code that answers a client's close frame (RFC 6455 §5.5.1, §7.4): its own when it is one a peer may send,
    /// none when it sent none, 1002 (protocol error) for a one-byte payload or a code no endpoint sends (below 1000,
    /// 1004–1006, 1015, the unassigned 1016–2999, 5000 and above), and 1007 for a reason that is not UTF-8.
    static func answerCode(toClose payload: ByteBuffer) -> UInt16? {
        if payload.readableBytes == 0 { return nil }
        guard let code = payload.getInteger(at: payload.readerIndex, as: UInt16.self) else { return 1002 }
        guard (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code) else { return 1002 }
        let reason = payload.readableBytesView.dropFirst(2)
        return String(validating: reason, as: UTF8.self) == nil ? 1007 : code
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The heartbeat round: pings, or disconnects a client that did not answer the last ping.
    func beat() {
        guard let context else { return }
        if let ending = stream.slot.mailbox.ending {
            finish(ending)  // closed while its connection could take nothing
            return
        }
        guard !awaitsPong else {
            context.close(promise: nil)
            return
        }
        awaitsPong = true
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))), promise: nil)
    }

    /// Writes what the mailbox holds while the connection takes it; asks the mailbox to call back when it has more.
    private func drain() {
        while let context, let waker, !isChecking, !isClosing {
            guard context.channel.isWritable else {
                if let ending = stream.slot.mailbox.ending { finish(ending) }
                return
            }
            switch stream.slot.mailbox.take(orWhenReady: waker) {
            case .waiting:
                return
            case .ended(let ending):
                finish(ending)
                return
            case .batch(let batch):
                let now = NIODeadline.now()
                let carries = batch.changes.values.contains { !$0.carried.isEmpty }
                if batch.recheck || (carries && now >= checkDue) || (batch.notCurrent && now >= retryDue) {
                    check(before: batch, now: now)
                    return
                }
                write(batch, context: context)
            }
        }
    }

    /// Checks the session and reloads the spaces before writing `batch`: when the account changed, when the last check
    /// is older than ``StreamService/recheckInterval`` and the batch carries changes, or when the stream is not current
    /// and its last try is older than ``StreamService/recheckRetry``.
    private func check(before batch: StreamMailbox.Batch, now: NIODeadline) {
        guard let loop = eventLoop else { return }
        isChecking = true
        retryDue = now + TimeAmount(StreamService.recheckRetry)
        let handler = NIOLoopBound(self, eventLoop: loop)
        let stream = stream
        Task {
            let check = await stream.recheck()
            loop.execute { handler.value.checked(check, before: batch) }
        }
    }

    private func checked(_ check: OpenStream.Check, before batch: StreamMailbox.Batch) {
        isChecking = false
        guard let context, !isClosing else { return }
        var batch = batch
        switch check {
        case .sessionEnded:
            close(Self.sessionEnded, reason: "session ended", context: context)
            return
        case .current(let spaces):
            checkDue = Self.nextCheck(after: .now())
            // Announcements queued for a space the account no longer has go unsent.
            batch.changes = batch.changes.filter { spaces[$0.key] != nil }
        case .failed:
            // What was queued goes as plain pokes, which carry no data; the check is tried again after
            // ``StreamService/recheckRetry``.
            for space in batch.changes.keys { batch.changes[space]?.carried = [] }
            checkDue = retryDue
        }
        write(batch, context: context)
        drain()
    }

    private func write(_ batch: StreamMailbox.Batch, context: ChannelHandlerContext) {
        var sent = 0, carried = 0
        for (space, announcement) in batch.changes {
            guard !announcement.carried.isEmpty else {
                send(StreamMessage.change(space: space, seq: announcement.seq).jsonText, context: context)
                sent += 1
                continue
            }
            for message in announcement.carried {
                if let encoder {
                    encoder.write(NIOAny(message.frame), promise: nil)  // the same bytes for every stream, framed once
                } else {
                    context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: message.bytes)), promise: nil)
                }
                sent += 1
                carried += 1
            }
        }
        if batch.sync {
            send(StreamMessage.sync.jsonText, context: context)
            sent += 1
        }
        context.flush()
        stream.service.metrics.messages.increment(by: Int64(sent))
        stream.service.metrics.carried.increment(by: Int64(carried))
    }

    private func send(_ text: String, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: text))), promise: nil)
    }

    /// Closes the stream as the mailbox's ending says.
    private func finish(_ ending: StreamMailbox.Ending) {
        guard let context else { return }
        switch ending {
        case .clientLeft:
            isClosing = true
            context.close(promise: nil)
        case .tokenExpired:
            close(Self.tokenExpired, reason: "access token expired", context: context)
        case .closed:
            // The server shuts down: "going away" tells clients to spread their reconnections (a deploy's storm).
            close(.goingAway, reason: "server shutting down", context: context)
        }
    }

    /// Sends the close frame; the stream stops counting once it is written, and the connection closes when the client
    /// answers, or after ``closeTimeout``.
    private func close(_ code: WebSocketErrorCode, reason: String, context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        let stream = stream
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).whenComplete { _ in
            stream.end()
        }
        let channel = context.channel
        closing = context.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
    }
}

import NIOCore
import NIOSSL

/// One reply of a mail server: its three-digit code and the text of each of its lines.
struct SMTPReply: Sendable, Hashable {
    /// The reply code, such as `250`.
    var code: Int
    /// The text after the code on each line (`250-PIPELINING` gives `PIPELINING`).
    var lines: [String]
}

/// Splits what a mail server sends into replies (`250-first`, `250 last`) and hands each to the one waiting for it.
///
/// A plain inbound handler rather than an async channel wrapper, so STARTTLS can put a TLS handler in front of it
/// mid-connection; everything here runs on the channel's event loop.
final class SMTPReplyHandler: ChannelInboundHandler {
    /// Bytes from the server (decrypted, once TLS is in front).
    typealias InboundIn = ByteBuffer

    /// The longest reply accepted, all lines together; a longer one ends the connection.
    static let maximumReplySize = 64 * 1024

    /// The channel's loop, where every request and reply is handled.
    private let eventLoop: any EventLoop
    /// The handler's place in the pipeline, while it is in one: what a failure closes.
    private var context: ChannelHandlerContext?
    /// Bytes not yet ending in a line break.
    private var partialLine = ByteBuffer()
    /// The code and lines of the reply being read, until its last line.
    private var current: (code: Int, lines: [String], size: Int)?
    /// Whole replies nobody asked for yet.
    private var replies = CircularBuffer<SMTPReply>()
    /// Why the connection ended, once it has: later requests fail with it.
    private var failure: SMTPError?
    /// The request waiting for the next reply, and the deadline that fails it.
    private var waiter: (promise: EventLoopPromise<SMTPReply>, timeout: Scheduled<Void>)?

    /// Whether nothing has arrived that no one asked for: checked before STARTTLS, so plaintext a server (or an
    /// attacker) sent after its `220` is never read as if it came over TLS.
    var isIdle: Bool { partialLine.readableBytes == 0 && current == nil && replies.isEmpty }

    /// Creates the handler of a channel on `eventLoop`.
    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Keeps the context, to close the channel on a failure.
    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Forgets the context.
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// The next reply, or a failure when the connection ends or `timeout` passes first (which closes it).
    func nextReply(timeout: Duration) -> EventLoopFuture<SMTPReply> {
        if let reply = replies.popFirst() { return eventLoop.makeSucceededFuture(reply) }
        guard failure == nil, context != nil else {
            return eventLoop.makeFailedFuture(failure ?? .connection("the connection to the mail server is closed"))
        }
        precondition(waiter == nil, "one reply is awaited at a time")
        let promise = eventLoop.makePromise(of: SMTPReply.self)
        let deadline = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) {
            self.fail(.connection("the mail server did not answer within \(timeout)"))
        }
        waiter = (promise, deadline)
        return promise.futureResult
    }

    /// Adds the bytes to the line being read and takes every line they complete.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard failure == nil else { return }
        var bytes = unwrapInboundIn(data)
        partialLine.writeBuffer(&bytes)
        while failure == nil, let newline = partialLine.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - partialLine.readableBytesView.startIndex + 1
            var line = partialLine.readSlice(length: length)!
            // RFC 5321 wants CRLF; a bare LF is taken too.
            let text = line.readString(length: line.readableBytes)!.trimmingSuffix { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }
            receive(line: text, size: length)
        }
        if (current?.size ?? 0) + partialLine.readableBytes > Self.maximumReplySize {
            fail(.connection("the mail server sent a reply longer than \(Self.maximumReplySize / 1024) KiB"))
        }
        partialLine.discardReadBytes()
    }

    /// Fails the waiting request and every later one: the server is gone.
    func channelInactive(context: ChannelHandlerContext) {
        fail(.connection("the mail server closed the connection"))
        context.fireChannelInactive()
    }

    /// Ends the connection with the error (a TLS failure, a reset), which the waiting request gets.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let isTLS = error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError
        fail(.connection(isTLS ? "TLS with the mail server failed: \(error)" : "the connection to the mail server failed: \(error)"))
    }

    /// Adds one line (`250-text`, `250 text` or `250`) to the reply being read, and hands the reply on at its last.
    private func receive(line: String, size: Int) {
        let characters = Array(line.utf8)
        let separator = characters.count > 3 ? characters[3] : UInt8(ascii: " ")
        guard characters.count >= 3, characters[..<3].allSatisfy({ (0x30...0x39).contains($0) }),
            separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-"),
            let code = Int(String(decoding: characters[..<3], as: UTF8.self)), code == current?.code ?? code
        else {
            fail(.connection("the mail server sent a line that is not an SMTP reply: \(line.prefix(100))"))
            return
        }
        let text = characters.count > 4 ? String(decoding: characters[4...], as: UTF8.self) : ""
        var reply = current ?? (code, [], 0)
        reply.lines.append(text)
        reply.size += size
        guard reply.size <= Self.maximumReplySize else {
            fail(.connection("the mail server sent a reply longer than \(Self.maximumReplySize / 1024) KiB"))
            return
        }
        guard separator == UInt8(ascii: " ") else {
            current = reply
            return
        }
        current = nil
        let complete = SMTPReply(code: code, lines: reply.lines)
        if let waiter {
            self.waiter = nil
            waiter.timeout.cancel()
            waiter.promise.succeed(complete)
        } else {
            replies.append(complete)
        }
    }

    /// Ends the connection with `error`, which the waiting request and every later one get (the first error wins).
    private func fail(_ error: SMTPError) {
        if failure == nil { failure = error }
        if let waiter {
            self.waiter = nil
            waiter.timeout.cancel()
            waiter.promise.fail(failure!)
        }
        context?.close(promise: nil)
    }
}

extension String {
    /// The string without the characters at its end that match `predicate`.
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var result = Substring(self)
        while let last = result.last, predicate(last) { result.removeLast() }
        return String(result)
    }
}

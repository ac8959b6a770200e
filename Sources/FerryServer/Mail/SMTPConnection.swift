import NIOCore
import NIOPosix
import NIOSSL

/// A connection to a mail server that sends one command at a time and reads its reply; ``close()`` ends every use.
struct SMTPConnection: Sendable {
    /// The channel, closed by ``close()`` (or by the reply handler when a step times out or the server misbehaves).
    let channel: any Channel
    /// How long each reply may take.
    let timeout: Duration
    /// The channel's reply handler, used only on its event loop.
    private let replies: NIOLoopBound<SMTPReplyHandler>

    /// Connects to `host`:`port`, speaking TLS from the first byte when `tls` is given.
    /// - Throws: a transient ``SMTPError`` when the connection fails or takes longer than `timeout`.
    static func connect(
        host: String, port: Int, tls: NIOSSLContext?, timeout: Duration, eventLoopGroup: any EventLoopGroup
    ) async throws -> SMTPConnection {
        let serverName = serverName(for: host)
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName)) }
                    try channel.pipeline.syncOperations.addHandler(SMTPReplyHandler(eventLoop: channel.eventLoop))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw SMTPError.connection("could not connect to the mail server at \(host):\(port): \(error)")
        }
        let replies = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: SMTPReplyHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return SMTPConnection(channel: channel, timeout: timeout, replies: replies)
    }

    /// The name to send as TLS SNI and check the certificate against: `nil` for an IP address, which NIOSSL then
    /// checks against the certificate's IP entries.
    static func serverName(for host: String) -> String? {
        IPAddress(host) == nil ? host : nil
    }

    /// Whether the peer is a loopback address, where a password may travel unencrypted.
    var isLoopback: Bool {
        channel.remoteAddress?.ipAddress.flatMap(IPAddress.init)?.isLoopback ?? false
    }

    /// The next reply from the server.
    func readReply() async throws -> SMTPReply {
        let (replies, timeout) = (replies, timeout)
        return try await channel.eventLoop.flatSubmit { replies.value.nextReply(timeout: timeout) }.get()
    }

    /// Sends `command` and a line break, then reads the reply.
    func send(_ command: String) async throws -> SMTPReply {
        // A failed write closes the channel, so the reply handler reports it, with the reason (a TLS error, a timeout).
        channel.writeAndFlush(ByteBuffer(string: command + "\r\n"), promise: nil)
        return try await readReply()
    }

    /// Puts TLS in front of the reply handler, after the server's `220` to `STARTTLS`.
    /// - Throws: when the server sent anything after that `220`: those bytes came before TLS and must not be trusted.
    func startTLS(_ tls: NIOSSLContext, serverName: String?) async throws {
        let (channel, replies) = (channel, replies)
        try await channel.eventLoop.submit {
            guard replies.value.isIdle else {
                throw SMTPError.connection("the mail server sent data after agreeing to STARTTLS; refusing it")
            }
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName), position: .first)
        }.get()
    }

    /// Closes the connection; it is already closed when a step failed.
    func close() async {
        try? await channel.close()
    }
}

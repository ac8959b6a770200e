import NIOCore
import NIOPosix

/// One proxied connection: the client's channel, the server's, and the fault of the request in flight.
///
/// HTTP/1.1 clients keep connections alive, so a fault is decided per request: a request begins when the client
/// sends bytes after the server has answered the previous one (clients do not pipeline). Both channels share one
/// event loop and every method runs on it.
final class FaultProxyConnection {
    private let core: FaultProxyCore
    private let client: any Channel
    private var server: (any Channel)?
    private var fault: FaultProxy.Fault = .none
    private var requestBytes = 0
    private var responseBytes = 0
    /// Whether the response is still in its head (status line and headers), and the head's last bytes so far.
    private var isInResponseHead = true
    private var headTail: [UInt8] = []
    private var isAwaitingRequest = true
    private var isHolding = false
    private var held: [ByteBuffer] = []
    private var isClosed = false

    init(core: FaultProxyCore, client: any Channel) {
        self.core = core
        self.client = client
    }

    /// Connects to the server on the client's event loop, then starts reading from the client.
    func connect(to target: SocketAddress) {
        let bound = NIOLoopBound(self, eventLoop: client.eventLoop)
        ClientBootstrap(group: client.eventLoop)
            .channelInitializer { server in
                server.eventLoop.makeCompletedFuture {
                    try server.pipeline.syncOperations.addHandler(FaultProxyServerSide(connection: bound))
                }
            }
            .connect(to: target)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let server):
                    guard !self.isClosed else {
                        server.close(promise: nil)
                        return
                    }
                    self.server = server
                    let client = self.client
                    client.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in client.read() }
                case .failure:
                    self.close()
                }
            }
    }

    /// Bytes from the client: the start of a request decides its fault; a delayed request is held back.
    func fromClient(_ buffer: ByteBuffer) {
        guard !isClosed else { return }
        if isAwaitingRequest {
            isAwaitingRequest = false
            fault = core.decide()
            requestBytes = 0
            responseBytes = 0
            isInResponseHead = !core.configuration.cutsResponseHeads
            headTail = []
            if case .delay(let delay) = fault {
                isHolding = true
                client.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(FaultProxyCore.nanoseconds(delay))) {
                    self.release()
                }
            }
        }
        if isHolding {
            held.append(buffer)
        } else {
            forwardRequest(buffer)
        }
    }

    private func release() {
        isHolding = false
        let buffers = held
        held = []
        for buffer in buffers { forwardRequest(buffer) }
    }

    private func forwardRequest(_ buffer: ByteBuffer) {
        guard !isClosed, let server else { return }
        var buffer = buffer
        if case .dropDuringRequest(let limit) = fault, requestBytes + buffer.readableBytes >= limit, core.isFaulty {
            let part = buffer.readSlice(length: max(0, limit - requestBytes)) ?? ByteBuffer()
            drop(.request, sending: part, to: server)
            return
        }
        requestBytes += buffer.readableBytes
        server.writeAndFlush(buffer, promise: nil)
    }

    /// Bytes from the server: the response has begun, so the client's next bytes are a new request.
    func fromServer(_ buffer: ByteBuffer) {
        guard !isClosed else { return }
        isAwaitingRequest = true
        var buffer = buffer
        switch fault {
        case .dropDuringRequest where core.isFaulty:
            // The whole request went through before its byte count was reached: drop before any of the answer,
            // so the server may have committed what the client never hears of.
            drop(.request, sending: ByteBuffer(), to: client)
            return
        case .dropDuringResponse(let limit) where core.isFaulty:
            // Bytes of the head do not count (unless heads may be cut); the body's do.
            var bodyStart = 0
            if isInResponseHead {
                guard let end = headEnd(in: buffer) else {
                    client.writeAndFlush(buffer, promise: nil)
                    return
                }
                isInResponseHead = false
                bodyStart = end
            }
            let counted = buffer.readableBytes - bodyStart
            if responseBytes + counted >= limit {
                let part = buffer.readSlice(length: bodyStart + max(0, limit - responseBytes)) ?? ByteBuffer()
                drop(.response, sending: part, to: client)
                return
            }
            responseBytes += counted
            client.writeAndFlush(buffer, promise: nil)
            return
        default:
            break
        }
        responseBytes += buffer.readableBytes
        client.writeAndFlush(buffer, promise: nil)
    }

    /// Where the response head ends in `buffer` (the index just past its blank line), or `nil` when it goes on.
    private func headEnd(in buffer: ByteBuffer) -> Int? {
        let bytes = headTail + Array(buffer.readableBytesView)
        let blank: [UInt8] = [13, 10, 13, 10]
        if bytes.count >= blank.count {
            for index in 0...(bytes.count - blank.count) where bytes[index..<(index + blank.count)].elementsEqual(blank) {
                return index + blank.count - headTail.count
            }
        }
        headTail = Array(bytes.suffix(blank.count - 1))
        return nil
    }

    private func drop(_ direction: FaultProxyCore.Direction, sending part: ByteBuffer, to channel: any Channel) {
        core.noteDrop(direction)
        isClosed = true
        let client = client, server = server
        channel.writeAndFlush(part).whenComplete { _ in
            client.close(promise: nil)
            server?.close(promise: nil)
        }
    }

    /// Either side closed (or failed): close the other.
    func close() {
        isClosed = true
        client.close(promise: nil)
        server?.close(promise: nil)
    }
}

/// The client's side of a proxied connection: connects to the server once accepted, and hands on what it reads.
final class FaultProxyClientSide: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let core: FaultProxyCore
    private let target: SocketAddress
    private var connection: FaultProxyConnection?

    init(core: FaultProxyCore, target: SocketAddress) {
        self.core = core
        self.target = target
    }

    func channelActive(context: ChannelHandlerContext) {
        core.noteConnection()
        guard core.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        let connection = FaultProxyConnection(core: core, client: context.channel)
        self.connection = connection
        connection.connect(to: target)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection?.fromClient(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        core.forget(context.channel)
        connection?.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection?.close()
    }
}

/// The server's side of a proxied connection: hands on what it reads.
final class FaultProxyServerSide: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: NIOLoopBound<FaultProxyConnection>

    init(connection: NIOLoopBound<FaultProxyConnection>) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.value.fromServer(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.value.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.value.close()
    }
}

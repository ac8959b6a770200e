import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import NIOHTTP1
import Logging
import NIOSSL
import NIOWebSocket
import WSClient

extension SyncClient: RealtimeRemote {
    /// Opens the realtime stream with the session's access token (refreshed first when it is about to expire).
    ///
    /// The socket pings the server every 20 seconds and gives up on a server that stops answering, so a dead
    /// network path ends the stream instead of leaving it silent.
    public func openStream(_ onMessage: @escaping @Sendable (StreamMessage) async -> Void) async throws -> StreamClosure {
        // The pipeline's request, upgraded: the same URL and headers as any other request, on a WebSocket.
        let request = try await auth.authorizedRequest(ServerRequest("GET", "sync/v1/stream"))
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw URLError(.badURL) }
        let secure = components.scheme == "https"
        guard let host = components.host else { throw URLError(.badURL) }
        let port = components.port ?? (secure ? 443 : 80)
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        headers.replaceOrAdd(name: "Origin", value: "\(secure ? "https" : "http")://\(host)")
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(20)))
        let socket = StreamSocket(
            host: Self.hostHeader(host, port: components.port),
            serverName: host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host, path: components.percentEncodedPath + (components.percentEncodedQuery.map { "?\($0)" } ?? ""),
            headers: headers, configuration: configuration,
            tls: try secure ? NIOSSLContext(configuration: streamTLS ?? .makeClientConfiguration()) : nil
        ) { inbound, _, _ in
            var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            while let message = try await messages.next() {
                guard case .text(let text) = message, let decoded = StreamMessage(jsonText: text) else { continue }
                await onMessage(decoded)
            }
        }
        let closed: WebSocketCloseFrame?
        do {
            closed = try await ClientConnection(socket, address: .hostname(host, port: port), logger: Self.streamLogger).run()
        } catch StreamSocket.Failure.declined(let status, let retryAfter?) where status == 429 || status == 503 {
            // Too many streams, or the server shutting down: retrying later is all there is to do, and asking again
            // why would double the requests of a connect storm.
            throw RemoteError(
                code: status == 429 ? .tooManyStreams : .unavailable, message: "The server refused the stream (HTTP \(status)); retry later.",
                status: status, retryAfter: .seconds(retryAfter)
            )
        } catch StreamSocket.Failure.declined {
            throw try await refusal()
        }
        return StreamClosure(code: closed.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) }, reason: closed?.reason)
    }

    /// Why the server refused the upgrade: the same request without it answers the reason as JSON (and refreshes an
    /// expired token on the way, like every other request).
    private func refusal() async throws -> any Error {
        do {
            _ = try await send("GET", "sync/v1/stream", expecting: Empty.self, what: "stream")
        } catch let error as RemoteError where error.code == .upgradeRequired {
            return URLError(.networkConnectionLost)  // admitted now: the upgrade failed on the way, so retry
        }
        return URLError(.badServerResponse)
    }

    private static let streamLogger = Logger(label: "ferry.stream")

    /// The `Host` header for `host` (an IPv6 address in brackets) and an explicit port.
    static func hostHeader(_ host: String, port: Int?) -> String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(name):\($0)" } ?? name
    }

    /// The stream trusts what the requests trust (a private CA given to the transport).
    private var streamTLS: TLSConfiguration? {
        #if canImport(AsyncHTTPClient)
        (auth.transport as? HTTPClientTransport)?.tlsConfiguration
        #else
        nil
        #endif
    }
}

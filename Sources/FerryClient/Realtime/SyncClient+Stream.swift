import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
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
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw URLError(.badURL) }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        guard let address = components.string else { throw URLError(.badURL) }
        var headers = HTTPFields()
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 16, additionalHeaders: headers, autoPing: .enabled(timePeriod: .seconds(20))
        )
        let closed: WebSocketCloseFrame?
        do {
            closed = try await WebSocketClient.connect(
                url: address, configuration: configuration, tlsConfiguration: streamTLS, logger: Self.streamLogger
            ) { inbound, _, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                while let message = try await messages.next() {
                    guard case .text(let text) = message, let decoded = StreamMessage(jsonText: text) else { continue }
                    await onMessage(decoded)
                }
            }
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
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

    /// The stream trusts what the requests trust (a private CA given to the transport).
    private var streamTLS: TLSConfiguration? {
        #if canImport(AsyncHTTPClient)
        (auth.transport as? HTTPClientTransport)?.tlsConfiguration
        #else
        nil
        #endif
    }
}

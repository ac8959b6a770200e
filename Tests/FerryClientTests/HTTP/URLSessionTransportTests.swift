import FerryClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("URLSessionTransport")
struct URLSessionTransportTests {
    @Test("a server that never answers times out after the transport's timeout, not URLSession's whole seconds")
    func timesOut() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let transport = URLSessionTransport(timeout: .milliseconds(300))
        let start = ContinuousClock.now
        let error = await #expect(throws: URLError.self) {
            try await transport.send(URLRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/")!))
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .timedOut)
        // The upper bound only tells our timeout from URLSession's 60 s default; it is loose because a loaded
        // 2-core machine can delay the wake-up by seconds (timing belongs in benchmarks, not tests).
        #expect(elapsed >= .milliseconds(280) && elapsed < .seconds(30), "waited \(elapsed)")
    }

    @Test("a closed port is a network error, not a timeout")
    func connectionRefused() async throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        let transport = URLSessionTransport(timeout: .seconds(3))
        let error = await #expect(throws: URLError.self) {
            try await transport.send(URLRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        }
        #expect(error?.code == .cannotConnectToHost)
    }
}

@Suite("ServerEndpoint")
struct ServerEndpointTests {
    @Test("keeps the base URL's path prefix and appends the query")
    func url() {
        let endpoint = ServerEndpoint(baseURL: URL(string: "https://sync.example.com/ferry")!, apiKey: "anon")
        let url = endpoint.url(path: "auth/v1/token", query: [URLQueryItem(name: "grant_type", value: "refresh_token")])
        #expect(url.absoluteString == "https://sync.example.com/ferry/auth/v1/token?grant_type=refresh_token")
    }
}

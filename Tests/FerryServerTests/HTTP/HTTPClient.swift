import AsyncHTTPClient
import FerryCore
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A minimal HTTP client for end-to-end tests.
struct HTTPClient {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data

        var text: String { String(decoding: body, as: UTF8.self) }

        func json() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
        }

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// One client for every server test, over AsyncHTTPClient as the SDK's Linux transport is: URLSession on Linux
    /// cost more CPU than the server under test, and a full run is CPU-bound. Its limits catch hangs, not slowness:
    /// a full run on 2 cores makes a request that takes milliseconds alone take many seconds.
    static let shared: AsyncHTTPClient.HTTPClient = {
        var configuration = AsyncHTTPClient.HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(120))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.decompression = .disabled
        return AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    static func send(_ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await shared.execute(request, timeout: .seconds(120))
        } catch where ["GET", "HEAD", "OPTIONS"].contains(method) && isStaleConnection(error) {
            // A kept-alive connection the server closed (its idle timeout) as the request went out on it: as browsers
            // and URLSession do, a request that changes nothing is sent again, on a new connection.
            response = try await shared.execute(request, timeout: .seconds(120))
        }
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            // As URLSession did: a repeated header's values joined by commas.
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        let bytes = try await response.body.collect(upTo: 512 << 20)
        return Reply(status: Int(response.status.code), headers: fields, body: Data(buffer: bytes))
    }

    /// The server's close of an idle kept-alive connection, as the request met it: closed, or reset (a close with bytes
    /// of the request unread).
    private static func isStaleConnection(_ error: any Error) -> Bool {
        (error as? ChannelError) == .ioOnClosedChannel || (error as? HTTPClientError) == .remoteConnectionClosed
            || (error as? IOError)?.errnoCode == ECONNRESET
    }
}

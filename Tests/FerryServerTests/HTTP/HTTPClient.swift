import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal HTTP client for end-to-end tests, over URLSession like the SDK's own.
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

    /// One session for every server test. Its limits catch hangs, not slowness: the tests of a whole run share it
    /// (Foundation's default of 6 connections per host would queue them all behind each other on 127.0.0.1), and a
    /// full run on 2 cores makes a request that takes milliseconds alone take many seconds.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120
        configuration.httpMaximumConnectionsPerHost = 64
        return URLSession(configuration: configuration)
    }()

    static func send(_ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil) async throws -> Reply {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.dataCancellingSafely(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }
}

import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hostile request costs a real `ferry serve`, in CPU time read from `/proc`: a separate process, so the
/// other tests running in this one do not count.
@Suite("Request cost")
struct RequestCostTests {
    @Test("a 12 MiB push of [{},{},…] is answered 4xx within a few CPU seconds")
    func pushBomb() async throws {
        let folder = NSTemporaryDirectory() + "ferry-cost-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = try FerryProcess(["serve", "--port", "0", "--data-dir", folder, "--log-level", "warning"])
        let prefix = "Ferry listening on http://127.0.0.1:"
        let banner = try #require(await process.waitForLine(startingWith: prefix))
        let base = "http://127.0.0.1:" + banner.dropFirst(prefix.count).prefix { $0.isNumber }
        let anonKey = try String(contentsOfFile: folder + "/keys/anon-key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

        let token = try await accessToken(base, anonKey: anonKey)

        let before = try process.cpuTime
        let start = ContinuousClock.now
        let reply = try await send(base + "/sync/v1/push", anonKey: anonKey, token: token, body: Self.bomb(bytes: 12 * 1024 * 1024))
        let cpu = try process.cpuTime - before
        print("push bomb: HTTP \(reply.status) after \(ContinuousClock.now - start), server CPU \(cpu)")
        #expect((400..<500).contains(reply.status), "\(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        // The old decoder spent over 30 s here; a debug build parses it in well under one.
        #expect(cpu < .seconds(5))
        process.signal(SIGTERM)
        _ = await process.waitForExit()
    }

    /// `{"deviceId":…,"mutations":[{…,"fields":{"x":[{},{},…]}}]}` of about `bytes` bytes.
    static func bomb(bytes: Int) -> Data {
        let head = #"{"deviceId":"8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c11","mutations":[{"mutationId":1,"space":"8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c11","collection":"notes","id":"8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c12","op":"upsert","clocks":{},"fields":{"x":[{}"#
        return Data((head + String(repeating: ",{}", count: (bytes - head.utf8.count) / 3) + "]}}]}").utf8)
    }

    /// Signs up (at OWASP's scrypt cost, which a loaded machine may not finish within the deadline: then retried).
    func accessToken(_ base: String, anonKey: String) async throws -> String {
        let credentials = Data(#"{"email":"bomb@example.com","password":"correct horse 1"}"#.utf8)
        var reply = try await send(base + "/auth/v1/signup", anonKey: anonKey, body: credentials)
        for _ in 0..<3 where reply.status != 200 {
            reply = try await send(base + "/auth/v1/token?grant_type=password", anonKey: anonKey, body: credentials)
        }
        let session = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
        return try #require(session?["access_token"] as? String, "HTTP \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
    }

    func send(_ url: String, anonKey: String, token: String? = nil, body: Data) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = body
        request.timeoutInterval = 300
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(anonKey, forHTTPHeaderField: "apikey")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

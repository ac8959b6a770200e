import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hostile request costs a real `ferry serve`, in CPU time read from `/proc`: a separate process, so the
/// other tests running in this one do not count.
@Suite("Request cost")
struct RequestCostTests {
    @Test("a 12 MiB push of [{},{},…] is answered 4xx within a few CPU seconds, from a session with or without a device",
          arguments: [false, true])
    func pushBomb(bound: Bool) async throws {
        let folder = NSTemporaryDirectory() + "ferry-cost-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = try FerryProcess(["serve", "--port", "0", "--data-dir", folder, "--log-level", "warning"])
        defer { process.killIfRunning() }
        let prefix = "Ferry listening on http://127.0.0.1:"
        let banner = try #require(await process.waitForLine(startingWith: prefix))
        let base = "http://127.0.0.1:" + banner.dropFirst(prefix.count).prefix { $0.isNumber }
        let anonKey = try String(contentsOfFile: folder + "/keys/anon-key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

        // Bound: the real client signs up and registers its device, so the push passes the session's checks and
        // reaches validation (where a record's size is measured) and fingerprinting.
        let (token, device, user) = bound ? try await Self.boundSession(base, anonKey: anonKey, home: folder + "/client")
            : (try await accessToken(base, anonKey: anonKey), "8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c11", "8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c11")

        let before = try process.cpuTime
        let start = ContinuousClock.now
        let body = Self.bomb(bytes: 12 * 1024 * 1024, device: device, space: user)
        let reply = try await send(base + "/sync/v1/push", anonKey: anonKey, token: token, body: body)
        let cpu = try process.cpuTime - before
        let text = String(decoding: reply.body.prefix(300), as: UTF8.self)
        print("push bomb (bound: \(bound)): HTTP \(reply.status) after \(ContinuousClock.now - start), server CPU \(cpu): \(text)")
        if bound {
            #expect(reply.status == 200 && text.contains("record_too_large"), "\(text)")
        } else {
            #expect((400..<500).contains(reply.status), "\(text)")
        }
        // The old decoder spent over 30 s here; a debug build parses it in well under one.
        #expect(cpu < .seconds(5))
        process.signal(SIGTERM)
        _ = await process.waitForExit()
    }

    /// `{"deviceId":…,"mutations":[{…,"fields":{"x":[{},{},…]}}]}` of about `bytes` bytes.
    static func bomb(bytes: Int, device: String, space: String) -> Data {
        let head = #"{"deviceId":"\#(device)","mutations":[{"mutationId":1,"space":"\#(space)","collection":"notes","id":"8f6f4a52-2c1a-4b36-9e2b-1b1a9a0e6c12","op":"upsert","clocks":{},"fields":{"x":[{}"#
        return Data((head + String(repeating: ",{}", count: (bytes - head.utf8.count) / 3) + "]}}]}").utf8)
    }

    /// An account (made as ``accessToken(_:anonKey:)`` makes it), then `ferry login` in `home`, which registers the
    /// profile's device with its proof: the access token, device id and user id of that profile.
    static func boundSession(_ base: String, anonKey: String, home: String) async throws -> (String, String, String) {
        _ = try await RequestCostTests().accessToken(base, anonKey: anonKey)
        let login = try await FerryProcess.run(
            ["login", "bomb@example.com", "--password-stdin", "--server", base, "--api-key", anonKey, "--profile", "p"],
            environment: ["FERRY_HOME": home], input: "correct horse 1\n"
        )
        #expect(login.status == 0, "\(login)")
        let profile = home + "/profiles/p/"
        let session = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: profile + "session.json"))) as? [String: Any]
        let token = try #require(session?["access_token"] as? String)
        let user = try #require((session?["user"] as? [String: Any])?["id"] as? String)
        let device = try String(contentsOfFile: profile + "device.id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return (token, device, user)
    }

    /// Signs up, and answers the session's access token.
    func accessToken(_ base: String, anonKey: String) async throws -> String {
        let credentials = Data(#"{"email":"bomb@example.com","password":"correct horse 1"}"#.utf8)
        let reply = try await send(base + "/auth/v1/signup", anonKey: anonKey, body: credentials)
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

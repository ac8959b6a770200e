import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signing a thousand paths reads the caller's spaces once, not once per path: the server's own CPU time for one such
/// request stays under a second for an account in a thousand spaces, on each engine. It reads `ferry serve`'s CPU
/// time from /proc, so it measures the server alone; `scripts/test.sh` still runs it alone, after the others, since
/// ports picked free can be taken by another test's server before the child binds them.
@Suite("Signing many paths")
struct SigningCostTests {
    @Test("signing 1,000 paths for an account in 1,000 spaces costs the server under a second of CPU", arguments: TestEngine.available)
    func signThousand(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let served = try await ServedProcess.start(database, schema: "tabletnotes.yaml")
            let server = served.process
            defer { server.killIfRunning() }
            let (base, anonKey) = (served.baseURL, served.anonKey)

            func send(_ method: String, _ path: String, token: String? = nil, json: Any) async throws -> (Int, Any?) {
                var request = URLRequest(url: URL(string: base + path)!)
                request.httpMethod = method
                request.timeoutInterval = 120
                request.setValue(anonKey, forHTTPHeaderField: "apikey")
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
                request.httpBody = try JSONSerialization.data(withJSONObject: json)
                let (data, response) = try await URLSession.shared.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data))
            }
            let email = uniqueEmail("signer")
            let (signUpStatus, session) = try await send("POST", "/auth/v1/signup", json: ["email": email, "password": "correct horse 1"])
            let token = try #require((session as? [String: Any])?["access_token"] as? String, "sign-up answered \(signUpStatus): \(String(describing: session))")

            // 999 spaces besides the personal one, eight requests at a time.
            let spaces = try await withThrowingTaskGroup(of: String?.self) { group in
                var made: [String] = []
                for index in 0..<999 {
                    if index >= 8, let id = try await group.next() { made += id.map { [$0] } ?? [] }
                    group.addTask {
                        let (status, body) = try await send("POST", "/sync/v1/spaces", token: token, json: ["name": "space \(index)"])
                        return status == 201 ? (body as? [String: Any])?["id"] as? String : nil
                    }
                }
                for try await id in group { made += id.map { [$0] } ?? [] }
                return made
            }
            #expect(spaces.count == 999)
            let paths = spaces.map { "\($0)/audio.m4a" } + ["not-a-space/x"]

            let before = try Self.cpuSeconds(server.processIdentifier)
            let (status, body) = try await send("POST", "/storage/v1/object/sign/sermon-audio", token: token, json: ["expiresIn": 60, "paths": paths])
            let cost = try Self.cpuSeconds(server.processIdentifier) - before
            #expect(status == 200 && (body as? [Any])?.count == 1000, "\(status)")
            #expect(cost < 1, "signing 1,000 paths took \(cost) s of the server's CPU")
            print("signing 1,000 paths on \(engine): \(String(format: "%.3f", cost)) s of server CPU")
        }
    }

    /// User plus system CPU time of process `pid`, from /proc/PID/stat (in clock ticks of 1/100 s).
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name may hold spaces; the fields after its closing parenthesis are space-separated.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        // After ")": state is field 3 of the whole line, so utime (14) and stime (15) are at 11 and 12 here.
        return (try #require(Double(fields[11])) + (try #require(Double(fields[12])))) / 100
    }
}

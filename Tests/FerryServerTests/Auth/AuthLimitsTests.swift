import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/auth/v1`'s limits: counted before bodies are read, per account without locking out devices that hold a
/// session, on password changes, and on the password-hash queue.
@Suite("Auth rate limits")
struct AuthLimitsTests {
    @Test("the per-client attempt limit answers before the body is read")
    func limitBeforeBody() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.auth.signInAttemptsPerAddress = 2
        }) { server in
            let auth = AuthHarness(server: server)
            for _ in 0..<2 {
                let reply = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": uniqueEmail(), "password": "wrong horse 1"])
                #expect(reply.status == 400)
            }
            let slashed = try await auth.send("POST", "/auth/v1/signup/", body: Data("not json".utf8))
            #expect(slashed.status == 429, "a trailing slash reaches the same route and is counted the same")
            let limited = try await auth.send("POST", "/auth/v1/signup", body: Data("not json".utf8))
            #expect(limited.status == 429, "counted before the body was decoded")
            #expect(limited.errorCode == "over_request_rate_limit")
            #expect(Int(limited.header("Retry-After") ?? "") ?? 0 > 0)
        }
    }

    @Test("failures from many addresses lock out the addresses that failed, never the owner on another address or a device that holds a session")
    func perAccountLimit() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.trustedProxies = TrustedProxies([IPNetwork("127.0.0.1")!])
            configuration.auth.signInFailuresPerAccount = 3
        }) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            let session = try await auth.signUp(email)
            for hop in 1...3 {
                let reply = try await signIn(auth, email, "wrong horse 1", from: "203.0.113.\(hop)")
                #expect(reply.status == 400)
            }
            let locked = try await signIn(auth, email, "correct horse 1", from: "203.0.113.1")
            #expect(locked.status == 429, "an address that failed is refused once the account has had 3 failures")
            #expect(locked.errorCode == "over_request_rate_limit")
            let fresh = try await signIn(auth, email, "correct horse 1", from: "203.0.113.9")
            #expect(fresh.status == 200, "the owner on an address that never failed is not locked out: \(fresh.text)")
            let guess = try await signIn(auth, email, "wrong horse 1", from: "203.0.113.10")
            #expect(guess.status == 400, "a new address gets one guess")
            #expect(try await signIn(auth, email, "wrong horse 1", from: "203.0.113.10").status == 429, "and no second")

            let owner = try await signIn(auth, email, "correct horse 1", from: "203.0.113.1", token: session.accessToken)
            #expect(owner.status == 200, "a device holding a session of the account signs in still: \(owner.text)")
            #expect(try await auth.refresh(session.refreshToken).status == 200, "refreshing needs no password and is never locked")
        }
    }

    func signIn(_ auth: AuthHarness, _ email: String, _ password: String, from address: String, token: String? = nil) async throws -> HTTPClient.Reply {
        var headers = ["apikey": auth.anonKey, "Content-Type": "application/json", "X-Forwarded-For": address]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await auth.server.send("POST", "/auth/v1/token?grant_type=password", headers: headers,
            body: try JSONSerialization.data(withJSONObject: ["email": email, "password": password])
        )
    }

    @Test("password changes are limited per account")
    func passwordChanges() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.auth.passwordChangesPerAccount = 2
        }) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            for attempt in 1...2 {
                let reply = try await auth.send("PUT", "/auth/v1/user", json: ["password": "new horse \(attempt)0"], token: session.accessToken)
                #expect(reply.status == 200, "\(reply.text)")
            }
            let limited = try await auth.send("PUT", "/auth/v1/user", json: ["password": "new horse 30"], token: session.accessToken)
            #expect(limited.status == 429)
            #expect(limited.errorCode == "over_request_rate_limit")
            let metadata = try await auth.send("PUT", "/auth/v1/user", json: ["data": ["city": "Leeds"]], token: session.accessToken)
            #expect(metadata.status == 200, "metadata changes are not password changes")
        }
    }

    @Test("a full password-hash queue answers 429 with Retry-After at once, never a 5xx")
    func hashQueueBounded() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.auth.passwordHashing = .init(logN: 15, blockSize: 8, parallelism: 1)
            configuration.auth.passwordHashQueueLength = 0
        }) { server in
            let auth = AuthHarness(server: server)
            let replies = try await withThrowingTaskGroup(of: HTTPClient.Reply.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": uniqueEmail(), "password": "wrong horse 1"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let busy = replies.filter { $0.status == 429 }
            #expect(!busy.isEmpty, "8 hashes at once, 2 slots and no queue: some must be refused")
            #expect(busy.allSatisfy { $0.errorCode == "over_request_rate_limit" && $0.header("Retry-After") != nil })
            #expect(replies.allSatisfy { $0.status == 429 || $0.errorCode == "invalid_credentials" })
        }
    }
}

@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Instances given the same secret accept each other's API keys, so an app behind a load balancer works whichever
/// instance answers.
@Suite("Accounts: one set of keys for every instance")
struct SharedKeysTests {
    static let secret = "a shared secret of at least thirty-two characters"

    /// A key's header and claims, without its signature, for a failure message.
    static func unsigned(_ key: String) -> String {
        key.split(separator: ".").prefix(2).map { part in
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return Data(base64Encoded: text).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }.joined(separator: " ")
    }

    @Test("two data folders with one secret make the same keys, and each accepts the other's")
    func sameSecret() async throws {
        let first = try TemporaryFolder(), second = try TemporaryFolder()
        defer { first.remove(); second.remove() }
        let a = try await ServerKeys.loadOrCreate(dataDirectory: first.url.path(), configuredSecret: Self.secret, issuer: "ferry")
        let b = try await ServerKeys.loadOrCreate(dataDirectory: second.url.path(), configuredSecret: Self.secret, issuer: "ferry")
        #expect(a.anonKey == b.anonKey && a.serviceRoleKey == b.serviceRoleKey, "the keys follow from the secret: \(Self.unsigned(a.anonKey)) vs \(Self.unsigned(b.anonKey))")
        #expect(b.role(ofKey: a.anonKey) == .anon && b.role(ofKey: a.serviceRoleKey) == .serviceRole)
    }

    /// The header's fields live in a dictionary whose order differs from one dictionary to the next, even in one
    /// process: unsorted, two instances' keys differed now and then (the test above failed intermittently until the
    /// signer was given the sorting encoder, not only the key collection).
    @Test("an API key's header and claims are written with sorted keys, the same bytes from every issuer")
    func sortedKeyText() async throws {
        var keys: Set<String> = []
        for _ in 0..<20 {
            let issuer = await TokenIssuer(secret: Array(Self.secret.utf8), issuer: "ferry")
            keys.insert(try await issuer.makeAnonKey())
        }
        #expect(keys.count == 1)
        #expect(keys.map(Self.unsigned) == [#"{"alg":"HS256","typ":"JWT"} {"exp":4102444800,"iat":1767225600,"iss":"ferry","role":"anon"}"#])
    }

    @Test("a key an older instance made with the same secret is accepted; other secrets, issuers, roles and garbage are not")
    func olderAndForeignKeys() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keys = try await ServerKeys.loadOrCreate(dataDirectory: folder.url.path(), configuredSecret: Self.secret, issuer: "ferry")
        let issuer = await TokenIssuer(secret: Array(Self.secret.utf8), issuer: "ferry")
        // An older instance signed its keys with its own start time.
        let older = try await issuer.makeAPIKey(role: "anon", issuedAt: Date(), expiresAt: Date().addingTimeInterval(3600))
        #expect(older != keys.anonKey && keys.role(ofKey: older) == .anon)
        let expired = try await issuer.makeAPIKey(role: "anon", issuedAt: Date(timeIntervalSinceNow: -7200), expiresAt: Date(timeIntervalSinceNow: -3600))
        #expect(keys.role(ofKey: expired) == nil)
        let token = try await issuer.makeAccessToken(userID: UUID(), email: "x@example.com", sessionID: UUID(), now: Date(), lifetime: .seconds(60)).token
        #expect(keys.role(ofKey: token) == nil, "an access token (role authenticated) is no API key")
        let foreign = await TokenIssuer(secret: Array("another secret of at least thirty-two characters".utf8), issuer: "ferry")
        #expect(keys.role(ofKey: try await foreign.makeAPIKey(role: "anon")) == nil)
        let otherIssuer = await TokenIssuer(secret: Array(Self.secret.utf8), issuer: "other")
        #expect(keys.role(ofKey: try await otherIssuer.makeAPIKey(role: "anon")) == nil)
        #expect(keys.role(ofKey: try await issuer.makeAPIKey(role: "service_role")) == .serviceRole)
        for garbage in ["", "a.b.c", "...", String(repeating: "x", count: 5000), keys.anonKey + "x", String(keys.anonKey.dropLast())] {
            #expect(keys.role(ofKey: garbage) == nil)
        }
    }
}

extension SharedKeysTests {
    @Test("behind a load balancer: two instances on one PostgreSQL, one made its keys before keys followed from the secret; an app with either's keys works on both")
    func twoInstances() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var first = database.serverConfiguration, second = database.serverConfiguration
            first.auth.jwtSecret = Self.secret
            second.auth.jwtSecret = Self.secret
            first.dataDirectory = database.folder + "/first"
            second.dataDirectory = database.folder + "/second"
            // The second instance keeps the anon key an older ferry made at its first start.
            let issuer = await TokenIssuer(secret: Array(Self.secret.utf8), issuer: "ferry")
            let older = try await issuer.makeAPIKey(role: "anon", issuedAt: Date(timeIntervalSinceNow: -86_400), expiresAt: Date(timeIntervalSinceNow: 86_400 * 365))
            try FileManager.default.createDirectory(atPath: second.dataDirectory + "/keys", withIntermediateDirectories: true)
            try older.write(toFile: second.dataDirectory + "/keys/anon-key", atomically: true, encoding: .utf8)
            let a = try await LiveServer.start(first), b = try await LiveServer.start(second)
            #expect(b.server.keys.anonKey == older && a.server.keys.anonKey != older)
            let email = uniqueEmail("balanced")
            func call(_ server: LiveServer, _ path: String, key: String, bearer: String? = nil, json: [String: Any]? = nil) async throws -> HTTPClient.Reply {
                var headers = ["apikey": key, "Content-Type": "application/json"]
                if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
                return try await HTTPClient.send(json == nil ? "GET" : "POST", server.baseURL.appending(path: path), headers: headers, body: try json.map { try JSONSerialization.data(withJSONObject: $0) })
            }
            let signUp = try await call(a, "auth/v1/signup", key: b.server.keys.anonKey, json: ["email": email, "password": "correct horse 1"])
            #expect(signUp.status == 200, "the first instance takes the second's (older) key: \(signUp.text)")
            let signIn = try await call(b, "auth/v1/token", key: a.server.keys.anonKey, json: ["email": email, "password": "correct horse 1"])
            #expect(signIn.status != 401, "the second instance takes the first's key")
            let admin = try await call(b, "auth/v1/admin/users", key: a.server.keys.anonKey, bearer: a.server.keys.serviceRoleKey)
            #expect(admin.status == 200, "the service-role key works on both: \(admin.text)")
            await a.stop()
            await b.stop()
        }
    }
}

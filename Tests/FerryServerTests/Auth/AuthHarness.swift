import FerryCore
import FerryServer
import FerryTesting
import Foundation

/// Talks to `/auth/v1` of a server under test the way supabase-swift does: `apikey` header, JSON bodies.
struct AuthHarness {
    let server: any ServerUnderTest

    var anonKey: String { server.server.keys.anonKey }

    /// A light scrypt cost for tests that sign in many times; one test keeps the OWASP default.
    static func fastHashing(_ configuration: inout ServerConfiguration) {
        configuration.useFastPasswordHashing()
    }

    func send(
        _ method: String, _ path: String, json: [String: Any]? = nil, body: Data? = nil,
        token: String? = nil, apiKey: String? = nil, omitAPIKey: Bool = false
    ) async throws -> HTTPClient.Reply {
        var headers = ["Content-Type": "application/json"]
        if !omitAPIKey { headers["apikey"] = apiKey ?? anonKey }
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let data = try body ?? json.map { try JSONSerialization.data(withJSONObject: $0) }
        return try await server.send(method, path, headers: headers, body: data)
    }

    func signUp(_ email: String, password: String = "correct horse 1", data: [String: Any]? = nil) async throws -> AuthSession {
        var json: [String: Any] = ["email": email, "password": password]
        if let data { json["data"] = data }
        return try decode(try await send("POST", "/auth/v1/signup", json: json))
    }

    func signIn(_ email: String, password: String = "correct horse 1") async throws -> AuthSession {
        try decode(try await send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": password]))
    }

    func refresh(_ token: String) async throws -> HTTPClient.Reply {
        try await send("POST", "/auth/v1/token?grant_type=refresh_token", json: ["refresh_token": token])
    }

    func decode<Value: Decodable>(_ reply: HTTPClient.Reply, as type: Value.Type = Value.self) throws -> Value {
        guard reply.status == 200 else { throw HarnessError(reply: reply) }
        return try JSONDecoder().decode(Value.self, from: reply.body)
    }

    /// A sync message read by its one reader.
    func decode<Value: JSONStreamReadable>(_ reply: HTTPClient.Reply, as type: Value.Type = Value.self) throws -> Value {
        guard reply.status == 200 else { throw HarnessError(reply: reply) }
        return try JSONValueDecoder().decode(Value.self, from: Array(reply.body))
    }

    struct HarnessError: Error, CustomStringConvertible {
        var reply: HTTPClient.Reply
        var description: String { "HTTP \(reply.status): \(reply.text)" }
    }
}

extension HTTPClient.Reply {
    /// The `error_code` of an error body.
    var errorCode: String? { (try? json())?["error_code"] as? String }
}

/// The claims of a JWT, decoded without verifying (the server verified it).
func jwtClaims(_ token: String) throws -> [String: Any] {
    let parts = token.split(separator: ".")
    var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
    return try JSONSerialization.jsonObject(with: Data(base64Encoded: payload)!) as! [String: Any]
}

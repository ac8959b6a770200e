@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// A request that runs past the server's deadline is answered at the deadline, and the answer says so: the server was
/// busy, which is not the database's fault.
@Suite("Request deadline")
struct RequestDeadlineTests {
    @Test("a sign-up whose password hash outlasts the deadline is answered 503 service_unavailable 'did not finish in time', with Retry-After",
          arguments: TestEngine.available)
    func deadlinePassed(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            // OWASP's cost takes a few hundred milliseconds here; the deadline is shorter, yet long enough for the body.
            configuration.auth.passwordHashing = .init(logN: 17, blockSize: 8, parallelism: 1)
            configuration.requestDeadline = .milliseconds(150)
        }) { server in
            let reply = try await server.send(
                "POST", "/auth/v1/signup", headers: ["apikey": server.server.keys.anonKey, "Content-Type": "application/json"],
                body: Data(#"{"email":"late@example.com","password":"correct horse 1"}"#.utf8)
            )
            #expect(reply.status == 503, "\(reply.status) \(reply.text)")
            #expect(try reply.json()["error_code"] as? String == "service_unavailable")
            #expect(try (reply.json()["msg"] as? String)?.contains("did not finish this request in time") == true, "\(reply.text)")
            #expect(reply.header("Retry-After") == "5")
        }
    }
}

import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// Hashes made at another cost than the server's (`--password-hash-cost` changed) move to its cost at the next
/// sign-in, without ever undoing a password change.
@Suite("Auth: rehashing at the configured cost")
struct PasswordRehashTests {
    @Test("a sign-in rehashes a hash of another cost; a replacement from a hash that changed meanwhile does nothing",
          arguments: TestEngine.available)
    func rehashesOnSignIn(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail("rehash")
            let user = try await auth.signUp(email).user
            let storage = server.server.storage
            let made = try #require(try await storage.user(id: user.id)).passwordHash
            #expect(made.hasPrefix("$scrypt$ln=10,"), "made at the server's cost")

            // As if the account had been made before the cost changed.
            let older = try await PasswordHasher(parameters: .init(logN: 11, blockSize: 8, parallelism: 1)).hash("correct horse 1")
            #expect(try await storage.replacePasswordHash(userID: user.id, from: made, to: older))
            #expect(try await !storage.replacePasswordHash(userID: user.id, from: made, to: "$scrypt$stale"), "only from the hash it read")
            #expect(try await storage.user(id: user.id)?.passwordHash == older)

            _ = try await auth.signIn(email)
            let rehashed = try #require(try await storage.user(id: user.id)).passwordHash
            #expect(rehashed.hasPrefix("$scrypt$ln=10,") && rehashed != made, "hashed again at the server's cost: \(rehashed.prefix(20))")
            _ = try await auth.signIn(email)
            #expect(try await storage.user(id: user.id)?.passwordHash == rehashed, "a hash at the server's cost is kept")
        }
    }
}

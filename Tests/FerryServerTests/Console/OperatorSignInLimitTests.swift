@testable import FerryServer
import FerryCore
import FerryTesting
import Foundation
import Logging
import Testing

/// The console's sign-in limits, per client address as the HTTP layer names it: someone else's wrong passwords never
/// lock an operator out, and many addresses together are still bounded per e-mail.
@Suite("Console: sign-in limits")
struct OperatorSignInLimitTests {
    @Test("five wrong passwords from one address lock that address out of that e-mail only; fifty from many lock the e-mail")
    func limits() async throws {
        try await RouterServer.with(.sqlite, schema: try ConsoleRoutesTests.schema, configure: AuthHarness.fastHashing) { server in
            try await server.server.operators.add(email: "ops@example.com", password: ConsoleRoutesTests.password)
            let operators = OperatorService(
                storage: server.server.storage, hasher: PasswordHasher(parameters: .init(logN: 4, blockSize: 1, parallelism: 1)),
                secret: Array("a secret of the test's own".utf8), logger: Logger(label: "test")
            )
            func signIn(_ password: String, from client: String) async -> ErrorCode? {
                do {
                    _ = try await operators.signIn(email: "ops@example.com", password: password, client: client)
                    return nil
                } catch let error as ServiceError {
                    return error.code
                } catch {
                    return .internalError
                }
            }
            for _ in 0..<5 { #expect(await signIn("wrong password 1", from: "attacker") == .invalidCredentials) }
            #expect(await signIn(ConsoleRoutesTests.password, from: "attacker") == .overRequestRateLimit, "the guessing address waits")
            #expect(await signIn(ConsoleRoutesTests.password, from: "operator") == nil, "the operator's own address signs in")

            // Guesses spread over many addresses stop at 50 for the e-mail, whoever asks next.
            for index in 0..<45 { _ = await signIn("wrong password 1", from: "botnet-\(index)") }
            #expect(await signIn(ConsoleRoutesTests.password, from: "operator") == .overRequestRateLimit)
        }
    }
}

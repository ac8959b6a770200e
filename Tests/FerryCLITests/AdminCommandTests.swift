import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `ferry admin add|ls|passwd|remove`, on the embedded database (by its data folder, while the server runs) and on
/// PostgreSQL (by its URL).
@Suite("CLI: operators")
struct AdminCommandTests {
    @Test("operators are added, listed, given a new password and removed; a weak password, a duplicate and an unknown one are refused", arguments: TestEngine.available)
    func operators(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let target: [String]
            switch database.location {
            case .sqlite: target = ["--data-dir", database.folder]
            case .postgres(let url): target = ["--database", "postgres://\(url.username)@\(url.host):\(url.port)/\(url.database)?sslmode=disable"]
            }
            func run(_ arguments: [String], input: String? = nil) async throws -> FerryProcess.Exit {
                try await FerryProcess.run(["admin"] + arguments + target, input: input)
            }
            if case .sqlite = database.location {
                let mistyped = try await run(["ls"])
                #expect(mistyped.status == 66 && mistyped.stderr.contains("no_embedded_database"), "only add starts a database: \(mistyped.stderr)")
            }
            let added = try await run(["add", "Ops@Example.com", "--password-stdin", "--json"], input: "correct horse battery\n")
            #expect(added.status == 0, "\(added.stderr)")
            // The test's children hash at FERRY_PASSWORD_HASH_COST=10 (FerryProcess): said, and done.
            #expect(added.stderr.contains("below OWASP's minimum"), "\(added.stderr)")
            #expect(try await database.strings("SELECT password_hash FROM ferry_operators").first?.hasPrefix("$scrypt$ln=10,") == true)
            #expect(added.stdout.contains("\"email\":\"ops@example.com\""), "\(added.stdout)")
            let again = try await run(["add", "ops@example.com", "--password-stdin"], input: "another good one 7\n")
            #expect(again.status != 0 && again.stderr.contains("email_exists"), "\(again.stderr)")
            let weak = try await run(["add", "weak@example.com", "--password-stdin"], input: "short\n")
            #expect(weak.status != 0 && weak.stderr.contains("weak_password"), "\(weak.stderr)")
            let invalid = try await run(["add", "not-an-address", "--password-stdin"], input: "correct horse battery\n")
            #expect(invalid.status != 0 && invalid.stderr.contains("email_address_invalid"), "\(invalid.stderr)")
            let noPassword = try await run(["add", "quiet@example.com"])
            #expect(noPassword.status != 0 && noPassword.stderr.contains("--password-stdin"), "\(noPassword.stderr)")

            let listed = try await run(["ls", "--json"])
            let operators = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
            #expect(operators?.map { $0["email"] as? String } == ["ops@example.com"], "\(listed.stdout)")
            #expect(!listed.stdout.contains("scrypt") && !listed.stdout.contains("password"), "no hash is printed")

            #expect(try await run(["passwd", "ops@example.com", "--password-stdin"], input: "a new horse battery\n").status == 0)
            let unknown = try await run(["passwd", "nobody@example.com", "--password-stdin"], input: "a new horse battery\n")
            #expect(unknown.status != 0 && unknown.stderr.contains("user_not_found"), "\(unknown.stderr)")
            #expect(try await run(["remove", "ops@example.com"]).status == 0)
            #expect(try await run(["remove", "ops@example.com"]).status != 0)
            #expect(try await run(["ls"]).stdout.contains("No operators yet"))
        }
    }
}

import ArgumentParser
import FerryCore
import FerryServer
import Foundation
import Logging

/// `ferry admin add|ls|remove|passwd`: the operators who sign in to the console (`/console`), kept in the server's
/// database: its data folder (also while it runs) or its PostgreSQL URL.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Manage the operators who sign in to the server's console.",
        subcommands: [AdminAddCommand.self, AdminListCommand.self, AdminRemoveCommand.self, AdminPasswordCommand.self]
    )
}

/// The server's database: `--database` (FERRY_DATABASE), or the embedded one in `--data-dir`.
struct ServerDatabaseOptions: ParsableArguments {
    @OptionGroup var folder: DataFolderOption
    @Option(help: "The server's PostgreSQL URL (FERRY_DATABASE), when it does not run on its embedded database.") var database: String?

    /// Opens the server's database; only `add` (`creating`) may start an embedded one that does not exist yet, so a
    /// mistyped `--data-dir` is an error rather than an empty list. Commands that set a password (`hashing`) hash it at
    /// FERRY_PASSWORD_HASH_COST, as `ferry serve` does, warning below OWASP's minimum.
    func withOperators<Result: Sendable>(
        creating: Bool = false, hashing: Bool = false, _ body: (OperatorAdministration) async throws -> Result
    ) async throws -> Result {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = folder.resolved
        if let database = database ?? ProcessInfo.processInfo.environment["FERRY_DATABASE"], !database.isEmpty {
            configuration.database = try DatabaseLocation(parsing: database)
        }
        if case .sqlite(let path) = configuration.resolvedDatabase, !creating, !FileManager.default.fileExists(atPath: path) {
            throw CommandFailure(message: "No database at \(path): pass the server's --data-dir (or --database).", status: 66, code: .noEmbeddedDatabase)
        }
        var parameters = PasswordHasher.Parameters.owasp
        if hashing, let cost = try AccountOptions.passwordHashCost(nil, ProcessInfo.processInfo.environment, flag: "FERRY_PASSWORD_HASH_COST") {
            parameters.logN = cost
            if cost < PasswordHasher.Parameters.owasp.logN {
                FileHandle.standardError.write(Data("ferry: warning: FERRY_PASSWORD_HASH_COST=\(cost) is below OWASP's minimum (17): for tests and development only\n".utf8))
            }
        }
        return try await OperatorAdministration.with(configuration.resolvedDatabase, hashing: parameters, logger: Logger(label: "ferry.admin"), body)
    }
}

/// `ferry admin add EMAIL [--password-stdin]`.
struct AdminAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an operator.")

    @Argument(help: "The operator's e-mail.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordFromStandardInput = false
    @OptionGroup var options: ServerDatabaseOptions

    func run() async throws {
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: "Password for \(email): ")
        let record = try await options.withOperators(creating: true, hashing: true) { try await $0.add(email: email, password: password) }
        Output.emit(json: options.folder.json, human: "Added operator \(record.email); they sign in at /console.", [
            "id": record.id.lowercasedText, "email": record.email,
        ])
    }
}

/// `ferry admin ls`.
struct AdminListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the operators.")

    @OptionGroup var options: ServerDatabaseOptions

    func run() async throws {
        let operators = try await options.withOperators { try await $0.list() }
        if options.folder.json {
            print(JSONValue.array(operators.map { record in
                ["id": .string(record.id.lowercasedText), "email": .string(record.email), "created_at": .string(Timestamp.format(record.createdAt)),
                 "last_sign_in_at": record.lastSignInAt.map { .string(Timestamp.format($0)) } ?? .null]
            }).jsonText)
            return
        }
        guard !operators.isEmpty else {
            print("No operators yet: add one with 'ferry admin add EMAIL'.")
            return
        }
        for record in operators {
            let signedIn = record.lastSignInAt.map { "last sign-in \(Timestamp.format($0))" } ?? "never signed in"
            print("\(record.email)  added \(Timestamp.format(record.createdAt))  \(signedIn)")
        }
    }
}

/// `ferry admin remove EMAIL`.
struct AdminRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove an operator (their console sessions end).")

    @Argument(help: "The operator's e-mail.") var email: String
    @OptionGroup var options: ServerDatabaseOptions

    func run() async throws {
        try await options.withOperators { try await $0.remove(email: email) }
        Output.emit(json: options.folder.json, human: "Removed operator \(email.lowercased()).", ["email": email.lowercased(), "removed": true])
    }
}

/// `ferry admin passwd EMAIL [--password-stdin]`.
struct AdminPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "passwd", abstract: "Set an operator's password (their console sessions end).")

    @Argument(help: "The operator's e-mail.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the new password from standard input.") var passwordFromStandardInput = false
    @OptionGroup var options: ServerDatabaseOptions

    func run() async throws {
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: "New password for \(email): ")
        try await options.withOperators(hashing: true) { try await $0.setPassword(email: email, password: password) }
        Output.emit(json: options.folder.json, human: "Set the password of operator \(email.lowercased()); their console sessions ended.", [
            "email": email.lowercased(), "password_set": true,
        ])
    }
}

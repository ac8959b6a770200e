import FerryCore
import FerrySecurity
import Foundation
import Logging

/// `ferry admin`'s operations on the operators of a server, straight on its database (the embedded one also while the
/// server runs, as SQLite allows one writer at a time across processes), opened by ``with(_:hashing:logger:_:)``.
public struct OperatorAdministration: Sendable {
    let storage: any OperatorStorage
    let hasher: PasswordHasher

    /// Adds an operator; the password must pass the app's password policy.
    @discardableResult
    public func add(email rawEmail: String, password: String) async throws -> OperatorRecord {
        let email = try AuthService.validEmail(rawEmail)
        try PasswordPolicy.require(password)
        let time = Date()
        let record = OperatorRecord(id: UUID(), email: email, passwordHash: try await hasher.hash(password), createdAt: time, updatedAt: time)
        do {
            try await storage.createOperator(record)
        } catch AuthStorageError.emailTaken {
            throw ServiceError(.conflict, .emailExists, "An operator with the e-mail \(email) exists; use 'ferry admin passwd' to change their password.")
        }
        try await storage.logOperatorAction(OperatorAction(at: time, operatorEmail: "cli", action: "add_operator", target: email))
        return record
    }

    /// Every operator, by e-mail.
    public func list() async throws -> [OperatorRecord] {
        try await storage.operators()
    }

    /// Removes an operator (their console sessions end).
    public func remove(email rawEmail: String) async throws {
        let email = rawEmail.trimmingCharacters(in: .whitespaces).lowercased()
        guard try await storage.removeOperator(email: email) else { throw Self.noOperator(email) }
        try await storage.logOperatorAction(OperatorAction(at: Date(), operatorEmail: "cli", action: "remove_operator", target: email))
    }

    /// Sets an operator's password (their console sessions end).
    public func setPassword(email rawEmail: String, password: String) async throws {
        let email = rawEmail.trimmingCharacters(in: .whitespaces).lowercased()
        try PasswordPolicy.require(password)
        guard try await storage.setOperatorPassword(email: email, passwordHash: try await hasher.hash(password), now: Date()) else {
            throw Self.noOperator(email)
        }
        try await storage.logOperatorAction(OperatorAction(at: Date(), operatorEmail: "cli", action: "set_operator_password", target: email))
    }

    private static func noOperator(_ email: String) -> ServiceError {
        ServiceError(.notFound, .userNotFound, "No operator has the e-mail \(email); 'ferry admin ls' lists them.")
    }
}

extension FerryServer {
    /// This server's operators, as `ferry admin` manages them (for an application embedding the server, and tests).
    public var operators: OperatorAdministration { OperatorAdministration(storage: storage, hasher: auth.hasher) }
}

import FerryCore
import Foundation

/// Deleting an account for good, as the App Store asks of apps that create accounts: the rules here, the work in
/// storage's one transaction (``AccountStorage/deleteAccount(userID:collections:check:)``), then nothing of the
/// account is left: not its records, its files, its devices, its sessions nor its address.
struct AccountService: Sendable {
    let storage: any AccountStorage
    let auth: AuthService
    let blobs: any BlobStore
    let schema: Schema
    /// Tells the account's open streams to close.
    var events: (any RealtimeFeed)?

    /// Deletes the caller's account, after a recent sign-in or the current password (as a password change). A user who
    /// is the last owner of a space others share is refused until they make someone else an owner: the space is theirs
    /// too. Shared spaces the account alone belongs to are erased with its personal space.
    func deleteAccount(_ caller: AuthService.Caller, currentPassword: String?) async throws {
        try await auth.checkReauthentication(caller, currentPassword: currentPassword, action: "Deleting the account")
        try await delete(caller.userID) { memberships in
            let stranded = memberships.filter { $0.role == .owner && $0.otherOwners == 0 && $0.otherMembers > 0 }
            guard stranded.isEmpty else {
                let names = stranded.map { "'\($0.name)' (\($0.space.lowercasedText))" }.joined(separator: ", ")
                throw ServiceError(.conflict, .lastOwner,
                    "You are the last owner of \(names), which others share: make another member an owner (PATCH /sync/v1/spaces/{space}/members/{user}), then delete the account."
                )
            }
        }
    }

    /// An admin's deletion (`DELETE /auth/v1/admin/users/{id}`): the same erasure, without the user's consent; a space
    /// the user was the last owner of passes to its longest-standing member. `false` when there is no such user.
    func deleteUser(_ userID: UUID) async throws -> Bool {
        guard try await auth.storage.user(id: userID) != nil else { return false }
        try await delete(userID) { _ in }
        return true
    }

    private func delete(_ userID: UUID, check: @escaping @Sendable ([SharedMembership]) throws -> Void) async throws {
        try check(try await storage.sharedMemberships(userID: userID))
        let tables = schema.collections.filter { !$0.isSystem || $0.name == "profiles" }
        let erased = try await storage.deleteAccount(userID: userID, collections: tables, check: check)
        // Told first: every instance's memory of the account's sessions goes, whatever happens to the files.
        await events?.publish([.accountChanged(userID)])
        // The bytes of the spaces the transaction erased, once it committed (bytes kept in PostgreSQL went in it): a
        // deletion that fails leaves every file in place. Files a crash leaves behind, nothing names, so blob
        // collection removes them.
        try await blobs.deleteAll(in: erased)
    }
}

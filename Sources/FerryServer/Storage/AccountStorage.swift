import FerryCore
import Foundation

/// A shared space an account belongs to, as deleting the account finds it.
struct SharedMembership: Sendable, Hashable {
    var space: UUID
    var name: String
    var role: SpaceRole
    /// The other members who are owners.
    var otherOwners: Int
    /// All the other members.
    var otherMembers: Int
}

/// Deleting an account for good (`DELETE /auth/v1/user`, the App Store's account deletion).
protocol AccountStorage: Sendable {
    /// The account's memberships of shared spaces.
    func sharedMemberships(userID: UUID) async throws -> [SharedMembership]
    /// Deletes the account in one transaction, the account's row locked: `check` sees its shared memberships as they
    /// are then and throws to refuse, changing nothing. Then the records of its personal space and of every shared
    /// space it alone belonged to are erased (rows deleted, tombstones included) with those spaces (their Storage
    /// objects and keys with them); a shared space left without an owner makes its longest-standing member one; a
    /// shared space it created passes to another owner; and the user goes, and with it
    /// its sessions, refresh tokens, devices, sealed secrets, memberships and pending invitations, freeing the address.
    /// `collections` are the tables to erase rows from. Returns the spaces erased, whose blob bytes the caller deletes
    /// after the commit (``BlobStore/deleteAll(in:)``; bytes kept in PostgreSQL are rows, which this transaction deletes).
    func deleteAccount(
        userID: UUID, collections: [CollectionDefinition], check: @Sendable ([SharedMembership]) throws -> Void
    ) async throws -> Set<UUID>
}

extension [SharedMembership] {
    /// The shared spaces the account alone belongs to: erased with it.
    var soleMemberships: Set<UUID> { Set(filter { $0.otherMembers == 0 }.map(\.space)) }
}

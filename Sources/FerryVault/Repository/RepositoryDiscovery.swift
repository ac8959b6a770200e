import Foundation

/// The outcome of discovery: the repository (if any) and what was examined on the way.
public struct RepositoryDiscovery: Sendable, Hashable {
    /// The repository, or `nil` when none was found.
    public var location: RepositoryLocation?
    /// Every candidate path examined, in order.
    public var candidates: [String]
    /// How many repositories the storage holds.
    public var storageRepositoryCount: Int
}

import FerryCore

/// The server half of a sync, as the ``SyncEngine`` needs it; ``SyncClient`` is the real one, tests use fakes.
public protocol SyncRemote: Sendable {
    /// Sends a batch of local writes (`POST /sync/v1/push`).
    func push(_ request: PushRequest) async throws -> PushResponse
    /// Fetches changes after the given cursors (`POST /sync/v1/pull`).
    func pull(_ request: PullRequest) async throws -> PullResponse
    /// The server's schema (`GET /sync/v1/schema`).
    func schema() async throws -> Schema
    /// Creates a shared space (`POST /sync/v1/spaces`), for spaces queued while offline.
    func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary
}

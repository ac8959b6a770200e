import FerryClient
import FerryCore

/// A test remote that changes a part of another's behaviour: whatever it does not define itself goes to `base`.
protocol ForwardingSyncRemote: SyncRemote {
    associatedtype Base: SyncRemote
    var base: Base { get }
}

extension ForwardingSyncRemote {
    func push(_ request: PushRequest) async throws -> PushResponse { try await base.push(request) }
    func pull(_ request: PullRequest) async throws -> PullResponse { try await base.pull(request) }
    func schema() async throws -> Schema { try await base.schema() }
    func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary { try await base.createSpace(request) }
}

@testable import FerryClient
import FerryCore
import Foundation
import Synchronization
import Testing

@Suite("PullAhead: pages requested ahead of the apply")
struct PullAheadTests {
    /// A server of `pages` pages: the page after cursor `c` moves the cursor to `c + 1`.
    final class PagedRemote: SyncRemote {
        let space = UUID()
        let pages: Int64
        let seen = Mutex<[Int64]>([])

        init(pages: Int64) { self.pages = pages }

        func request(after cursor: Int64) -> PullRequest { PullRequest(cursors: [space: cursor], limit: 10) }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let cursor = request.cursors[space] ?? 0
            seen.withLock { $0.append(cursor) }
            return PullResponse(changes: [], cursors: [space: cursor + 1], hasMore: cursor + 1 < pages)
        }

        func push(_ request: PushRequest) async throws -> PushResponse { throw CancellationError() }
        func schema() async throws -> Schema { throw CancellationError() }
        func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary { throw CancellationError() }

        /// Waits (up to 5 s) until the requests seen are `expected`.
        func waitForRequests(_ expected: [Int64]) async throws {
            for _ in 0..<500 where seen.withLock({ $0 }) != expected { try await Task.sleep(for: .milliseconds(10)) }
            #expect(seen.withLock { $0 } == expected)
        }
    }

    @Test("two pages are requested ahead of the one being applied, each once, in order, and the last page stops it")
    func twoAhead() async throws {
        let remote = PagedRemote(pages: 6)
        let ahead = PullAhead(remote: remote)
        defer { ahead.close() }
        let first = try await remote.pull(remote.request(after: 0))
        ahead.start(after: remote.request(after: 0), first)
        try await remote.waitForRequests([0, 1, 2])
        try await Task.sleep(for: .milliseconds(50))
        #expect(remote.seen.withLock { $0 } == [0, 1, 2], "no third page ahead")
        for cursor in Int64(1)..<6 {
            let page = try #require(try await ahead.take(remote.request(after: cursor)))
            #expect(page.cursors[remote.space] == cursor + 1)
        }
        try await remote.waitForRequests([0, 1, 2, 3, 4, 5])
        #expect(ahead.requests == 5)
    }

    @Test("a request other than the one asked ahead drops the pages ahead and gets nil: the loop asks again")
    func mismatch() async throws {
        let remote = PagedRemote(pages: 10)
        let ahead = PullAhead(remote: remote)
        defer { ahead.close() }
        ahead.start(after: remote.request(after: 0), try await remote.pull(remote.request(after: 0)))
        try await remote.waitForRequests([0, 1, 2])
        var other = remote.request(after: 1)
        other.exclude = [UUID()]  // a space that became locked: not the request sent ahead
        #expect(try await ahead.take(other) == nil)
        #expect(try await ahead.take(remote.request(after: 1)) == nil, "the pages ahead were dropped")
        try await Task.sleep(for: .milliseconds(50))
        #expect(remote.seen.withLock { $0 } == [0, 1, 2], "and nothing more was requested")
    }
}

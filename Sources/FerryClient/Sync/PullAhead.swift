import FerryCore
import Synchronization

/// Pull pages requested ahead of the apply: each page is requested as soon as the one before it arrives, with the
/// cursors that page leads to, up to ``depth`` pages ahead of the one being applied.
///
/// With one page ahead, the next page could be requested only once the one before it was applied, so the server and
/// the decoding waited on the device's writes for part of every page; with two, they run on while the device
/// writes. A page is used only when the request the store's state makes for it is the one it was requested with
/// (``take(_:)``); anything else (a reset, a key that arrived, a space that could not be opened) drops every page
/// ahead, and the loop asks again.
final class PullAhead: Sendable {
    /// Pages requested beyond the one being applied.
    static let depth = 2

    private struct Page {
        let request: PullRequest
        let reply: Task<PullResponse, any Error>
        var response: PullResponse?
    }

    private struct State {
        var pages: [Page] = []
        /// The page being applied, which the first page ahead follows.
        var applying: (request: PullRequest, response: PullResponse)?
        var requests = 0
        var isClosed = false
    }

    private let remote: any SyncRemote
    private let state = Mutex(State())

    init(remote: any SyncRemote) {
        self.remote = remote
    }

    /// How many requests were sent ahead, taken or not.
    var requests: Int { state.withLock(\.requests) }

    /// Starts requesting the pages after `response`, the reply to `request`, which is about to be applied.
    func start(after request: PullRequest, _ response: PullResponse) {
        state.withLock { state in
            state.applying = (request, response)
            fill(&state)
        }
    }

    /// The reply to `request` if it is the next page requested ahead; otherwise drops every page ahead and returns `nil`.
    func take(_ request: PullRequest) async throws -> PullResponse? {
        let page = state.withLock { state in state.pages.first.flatMap { $0.request == request ? $0 : nil } }
        guard let page else {
            cancel()
            return nil
        }
        let response = try await withTaskCancellationHandler { try await page.reply.value } onCancel: { page.reply.cancel() }
        state.withLock { state in
            if state.pages.first?.request == request { state.pages.removeFirst() }
            state.applying = (request, response)
            fill(&state)
        }
        return response
    }

    /// Cancels every page ahead.
    func cancel() {
        let pages = state.withLock { state in
            defer { state.pages = [] }
            return state.pages
        }
        for page in pages { page.reply.cancel() }
    }

    /// Cancels every page ahead and requests no more.
    func close() {
        state.withLock { $0.isClosed = true }
        cancel()
    }

    /// Requests pages after the last one that arrived (or the one being applied) until ``depth`` are ahead.
    private func fill(_ state: inout State) {
        while !state.isClosed, state.pages.count < Self.depth {
            let before: (request: PullRequest, response: PullResponse)
            if let last = state.pages.last {
                guard let response = last.response else { return }
                before = (last.request, response)
            } else {
                guard let applying = state.applying else { return }
                before = applying
            }
            guard before.response.hasMore, before.response.resetRequired.isEmpty else { return }
            let next = PullRequest(
                cursors: before.request.cursors.merging(before.response.cursors) { _, new in new }, limit: before.request.limit,
                exclude: before.request.exclude, clockForm: before.request.clockForm
            )
            let remote = self.remote
            let reply = Task { [weak self] in
                let response = try await remote.pull(next)
                self?.arrived(next, response)
                return response
            }
            state.pages.append(Page(request: next, reply: reply))
            state.requests += 1
        }
    }

    private func arrived(_ request: PullRequest, _ response: PullResponse) {
        state.withLock { state in
            guard let index = state.pages.firstIndex(where: { $0.request == request && $0.response == nil }) else { return }
            state.pages[index].response = response
            fill(&state)
        }
    }
}

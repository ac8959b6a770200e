import Dispatch
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)`, except that cancelling it never blocks the cancelling thread.
    ///
    /// In swift-corelibs-foundation (Linux) `URLSessionTask.cancel()` waits synchronously for the session's queue.
    /// `data(for:)` calls it from the Swift task's cancellation handler, which holds the task's status lock; when the
    /// transfer completes at that moment, the session's queue is resuming that very task and waits for the same lock:
    /// both threads block forever, and with them a cooperative thread of a 2-core machine's pool of two. A request
    /// timeout (``withTimeout(_:throwing:_:)``) cancels exactly when a slow answer may be arriving, so under load this
    /// stopped whole test processes. Here the cancel is sent from a Dispatch thread instead.
    public func dataCancellingSafely(for request: URLRequest) async throws -> (Data, URLResponse) {
        let holder = DataTaskHolder()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                holder.start(task)
            }
        } onCancel: {
            holder.cancel()
        }
    }
}

/// The data task of one ``URLSession/dataCancellingSafely(for:)`` call, and whether it was cancelled before it began.
private final class DataTaskHolder: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var isCancelled = false
    }

    private let state = Mutex(State())

    func start(_ task: URLSessionDataTask) {
        let isCancelled = state.withLock { state in
            state.task = task
            return state.isCancelled
        }
        task.resume()
        if isCancelled { Self.cancelLater(task) }
    }

    func cancel() {
        let task = state.withLock { state in
            state.isCancelled = true
            return state.task
        }
        if let task { Self.cancelLater(task) }
    }

    private static func cancelLater(_ task: URLSessionDataTask) {
        nonisolated(unsafe) let task = task  // URLSessionTask is thread-safe; it is not marked Sendable on Linux.
        DispatchQueue.global().async { task.cancel() }
    }
}

import FerryCore
import Hummingbird
import Synchronization

/// How long a request may take over its work: authentication, reading its body and waiting on the database.
///
/// It is set once per route group: the handlers of a ``DeadlineGroup`` run under it (the body within the deadline,
/// then the work within a fresh one) and write no timeout of their own; the ``Authenticator`` bounds its lookup the
/// same way. Streamed uploads cannot run whole under it (a body of gigabytes may take hours): the database steps
/// their routes run are bounded with ``bound(_:)``, the body by the idle timeout. The services' own upload steps
/// (`BlobService.upload`, `ObjectStorageService.upload`) are not bounded yet.
enum RequestDeadline {
    /// The running request's deadline; ``RequestDeadlineMiddleware`` sets it from `ServerConfiguration.requestDeadline`.
    @TaskLocal static var duration: Duration = ServerConfiguration().requestDeadline
    /// Where the running request of a ``DeadlineGroup`` stands: a deadline passing while its body is still arriving
    /// answers 408 (send it at once), not 503 (the server was slow); and once the body is in, the work gets a
    /// deadline of its own, so a large push sent over a slow link is not cut short by the time its upload took.
    @TaskLocal static var progress: Progress?

    final class Progress: Sendable {
        let isReadingBody = Atomic<Bool>(false)
        private let end: Mutex<ContinuousClock.Instant>

        init(duration: Duration) {
            end = Mutex(.now + duration)
        }

        /// When the request times out.
        var deadline: ContinuousClock.Instant { end.withLock { $0 } }

        /// The body is in: the work from here on has the whole deadline.
        func bodyArrived(duration: Duration) {
            isReadingBody.store(false, ordering: .sequentiallyConsistent)
            end.withLock { $0 = .now + duration }
        }
    }

    /// Runs one database step of a streamed-upload route within the deadline; past it the request fails with 503.
    static func bound<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withTimeout(duration, work)
    }

    /// ``bound(_:)`` against a deadline set earlier: the step gets what is left of it.
    static func bound<Value: Sendable>(until deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withDeadline({ deadline }, work)
    }

    /// Runs a whole request of a ``DeadlineGroup``: past the deadline it fails with 503, or 408 while reading the body;
    /// the body's arrival starts the work's deadline afresh (``Progress/bodyArrived(duration:)``).
    static func run(_ work: @escaping @Sendable () async throws -> Response) async throws -> Response {
        let progress = Progress(duration: duration)
        do {
            return try await $progress.withValue(progress) { try await withDeadline({ progress.deadline }, work) }
        } catch is TimeoutError where progress.isReadingBody.load(ordering: .sequentiallyConsistent) {
            throw bodyTimedOut
        }
    }

    /// 408 `body_timeout`: the deadline passed while the body was still arriving.
    static var bodyTimedOut: APIError {
        APIError(.requestTimeout, .bodyTimeout, "The request body did not arrive within \(duration); send it at once.")
    }
}

/// Makes the server's request deadline the ``RequestDeadline`` of every request it handles.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    let deadline: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestDeadline.$duration.withValue(deadline) { try await next(request, context) }
    }
}

/// A route group whose every handler runs under the request deadline (``RequestDeadline/run(_:)``): the one place the
/// routes that answer from the database are timed, so no handler can forget or repeat it.
///
/// A middleware cannot do this: Hummingbird hands it the rest of the chain as a non-escaping closure, and a deadline
/// that must hold even when the database ignores cancellation has to leave that work running unobserved.
struct DeadlineGroup<Context: RequestContext> {
    let group: RouterGroup<Context>

    init(_ group: RouterGroup<Context>) {
        self.group = group
    }

    typealias Handler = @Sendable (Request, Context) async throws -> any ResponseGenerator

    func on(_ path: RouterPath, method: HTTPRequest.Method, use handler: @escaping Handler) {
        group.on(path, method: method) { request, context -> Response in
            try await RequestDeadline.run { try await handler(request, context).response(from: request, context: context) }
        }
    }

    func get(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .get, use: handler) }
    func head(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .head, use: handler) }
    func post(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .post, use: handler) }
    func put(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .put, use: handler) }
    func patch(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .patch, use: handler) }
    func delete(_ path: RouterPath, use handler: @escaping Handler) { on(path, method: .delete, use: handler) }
}

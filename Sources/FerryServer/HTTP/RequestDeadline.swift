import Hummingbird

/// How long a request may take over its work (reading its body, waiting on the database), for code that has no
/// access to the server's configuration, such as ``Hummingbird/Request/decodeJSON(_:limit:invalidValue:)``.
enum RequestDeadline {
    /// The running request's deadline; ``RequestDeadlineMiddleware`` sets it from `ServerConfiguration.requestDeadline`.
    @TaskLocal static var duration: Duration = ServerConfiguration().requestDeadline
}

/// Makes the server's request deadline the ``RequestDeadline`` of every request it handles.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    let deadline: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestDeadline.$duration.withValue(deadline) { try await next(request, context) }
    }
}

import Hummingbird

/// Counts the requests `counts` picks against a per-client limit before their handler runs, so a client over its
/// limit is refused (429 `over_request_rate_limit`, `Retry-After`) before its body is read or decoded.
struct AttemptLimitMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let limiter: RateLimiter
    let counts: @Sendable (Request) -> Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if counts(request), let wait = await limiter.attempt(context.rateLimitKey) {
            throw ServiceError.rateLimited(wait)
        }
        return try await next(request, context)
    }
}

import FerryCore

extension RealtimeHub.Refusal {
    /// The refusal as the stream service answers it; HTTP says 429 or 503, with `Retry-After`.
    func serviceError(limits: RealtimeLimits) -> ServiceError {
        switch self {
        case .accountFull:
            ServiceError(
                .rateLimited, .tooManyStreams,
                "This account has \(limits.maximumStreamsPerAccount) streams open already; close one (or wait for it to time out) first.",
                retryAfter: .seconds(5)
            )
        case .serverFull:
            ServiceError(.unavailable, .tooManyStreams, "The server holds as many streams as it can; retry shortly.", retryAfter: .seconds(5))
        case .closing:
            ServiceError(.unavailable, .unavailable, "The server is shutting down; reconnect in a moment.", retryAfter: .seconds(1))
        }
    }
}

import Hummingbird

/// Sets the request's client address before anything counts against it: the socket peer, or, when the peer is a
/// trusted proxy, the client its forwarding headers name.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let client = proxies.client(peer: context.peerAddress, headers: request.headers) {
            context.clientAddress = client.description
            context.rateLimitKey = client.rateLimitKey
        }
        return try await next(request, context)
    }
}

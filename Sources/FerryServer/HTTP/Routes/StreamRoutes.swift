import FerryCore
import Foundation
import Hummingbird

/// `GET /sync/v1/stream`: the realtime WebSocket. The ``Authenticator`` (credentials from headers or, for browsers,
/// the query) and ``StreamAdmission`` admit it; this route opens the stream, before the upgrade, so every refusal is
/// an ordinary JSON error; the connection (``UpgradableHTTPChannel``) then upgrades and serves it with a
/// ``StreamChannelHandler``.
struct StreamRoutes {
    let service: StreamService

    func register(on group: RouterGroup<FerryRequestContext>) {
        let service = service
        group.get { _, context -> Response in
            guard let caller = context.caller else {
                throw APIError(.unauthorized, .noAuthorization, "This endpoint requires a valid Bearer token")
            }
            // Unmarked (a route without ``StreamAdmission/Mark``), the stream opens not current and checks first.
            let stream = try await service.open(caller, changesAtStart: context.accountChangesAtStart ?? -1)
            // Counted until its connection closes, at the latest: an upgrade that never completes ends it too.
            context.channel.closeFuture.whenComplete { _ in stream.end() }
            context.streamUpgrade.hand(stream)
            return Response(status: .ok)
        }
    }
}

import FerryCore
import Foundation
import Hummingbird
import HummingbirdWebSocket

/// `GET /sync/v1/stream`: the realtime WebSocket. The ``Authenticator`` (credentials from headers or, for browsers,
/// the query) and ``StreamAdmission`` admit it before the upgrade; ``StreamService`` serves it after.
struct StreamRoutes {
    let service: StreamService

    func register(on group: RouterGroup<FerryRequestContext>) {
        let service = service
        group.ws { inbound, outbound, context in
            context.requestContext.releaseWebSocket()
            guard let caller = context.requestContext.caller else { return }
            // Unmarked (a route without ``StreamAdmission/Mark``), the stream opens not current and checks first.
            let changesAtStart = context.requestContext.accountChangesAtStart ?? -1
            try await service.serve(caller, changesAtStart: changesAtStart, inbound: inbound, outbound: outbound)
        }
    }
}

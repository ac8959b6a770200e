import FerryCore
import Foundation
import Hummingbird
import HummingbirdWebSocket

/// `GET /sync/v1/stream`: the realtime WebSocket. ``StreamGate`` admits it before the upgrade; ``StreamService``
/// serves it after.
struct StreamRoutes {
    let gate: StreamGate
    let service: StreamService

    func register(on router: Router<FerryRequestContext>) {
        let service = service
        router.group("sync/v1/stream").add(middleware: gate).ws { inbound, outbound, context in
            guard let caller = context.requestContext.caller else { return }
            try await service.serve(caller, inbound: inbound, outbound: outbound)
        }
    }
}

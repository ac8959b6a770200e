import FerryCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// `GET /sync/v1/stream`: the realtime WebSocket. ``StreamGate`` admits it before the upgrade; ``StreamSession``
/// serves it after.
struct StreamRoutes {
    let gate: StreamGate
    let auth: AuthService
    let devices: DeviceService
    let storage: any SyncService.Storage
    let hub: RealtimeHub
    let metrics: StreamMetrics
    let logger: Logger

    func register(on router: Router<FerryRequestContext>) {
        let (auth, devices, storage, hub, metrics, logger) = (auth, devices, storage, hub, metrics, logger)
        router.group("sync/v1/stream").add(middleware: gate).ws { inbound, outbound, context in
            guard let caller = context.requestContext.caller else { return }
            let session = StreamSession(
                caller: caller, auth: auth, devices: devices, storage: storage, hub: hub, metrics: metrics, logger: logger
            )
            try await session.serve(inbound: inbound, outbound: outbound)
        }
    }
}

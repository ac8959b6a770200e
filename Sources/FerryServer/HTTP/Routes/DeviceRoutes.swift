import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/sync/v1/devices` and `/sync/v1/secrets`: registering devices, approving and revoking them, sealed space keys.
struct DeviceRoutes {
    let authenticator: SyncAuthenticator
    let devices: DeviceService
    let secrets: SecretsService

    func register(on router: Router<FerryRequestContext>) {
        let group = router.group("sync/v1").add(middleware: APIKeyMiddleware(anonKey: authenticator.auth.keys.anonKey))
        let (authenticator, devices, secrets) = (self.authenticator, self.devices, self.secrets)
        group.put("devices/:device") { request, context in
            var request = request
            let caller = try await authenticator.caller(request)
            let id = try Self.deviceID(context)
            let body = try await request.decodeJSON(DeviceRegistration.self) { path in
                path == "type" || path == "pushEnvironment" ? Self.unknownValue(path) : nil
            }
            let (device, isNew) = try await authenticator.withinDeadline { try await devices.register(caller, id: id, body) }
            return JSONResponse(device, status: isNew ? .created : .ok)
        }
        group.get("devices") { request, _ in
            let caller = try await authenticator.caller(request)
            return JSONResponse(try await authenticator.withinDeadline { try await devices.list(caller) })
        }
        group.post("devices/:device/trust") { request, context in
            let caller = try await authenticator.caller(request)
            let id = try Self.deviceID(context)
            return JSONResponse(try await authenticator.withinDeadline { try await devices.trust(caller, device: id) })
        }
        group.post("devices/:device/revoke") { request, context in
            let caller = try await authenticator.caller(request)
            let id = try Self.deviceID(context)
            return JSONResponse(try await authenticator.withinDeadline { try await devices.revoke(caller, device: id) })
        }
        group.get("secrets") { request, _ in
            let caller = try await authenticator.caller(request)
            return JSONResponse(try await authenticator.withinDeadline { try await secrets.state(caller) })
        }
        group.put("secrets") { request, _ in
            var request = request
            let caller = try await authenticator.caller(request)
            let body = try await request.decodeJSON(StoreSecretsRequest.self, limit: secrets.limits.maximumSecretsBytes)
            return JSONResponse(try await authenticator.withinDeadline { try await secrets.store(caller, body) })
        }
    }

    private static func deviceID(_ context: FerryRequestContext) throws -> UUID {
        guard let text = context.parameters.get("device"), let id = UUID(uuidString: text) else {
            throw APIError(.badRequest, .badRequest, "The device in the path is not a UUID.")
        }
        return id
    }

    /// 422 `invalid_device` for an unknown device type or push environment, listing the accepted values.
    private static func unknownValue(_ path: String) -> APIError {
        let accepted = path == "type" ? DeviceKind.allCases.map(\.rawValue) : PushEnvironment.allCases.map(\.rawValue)
        return APIError(.unprocessableContent, .invalidDevice, "\(path) must be one of: \(accepted.joined(separator: ", ")).")
    }
}

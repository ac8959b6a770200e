import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// `/sync/v1/devices` and `/sync/v1/secrets`: registering devices, approving and revoking them, sealed space keys.
struct DeviceRoutes {
    let devices: DeviceService
    let secrets: SecretsService

    func register(on group: DeadlineGroup<AuthenticatedContext>) {
        let (devices, secrets) = (self.devices, self.secrets)
        group.put("devices/:device") { request, context in
            var request = request
            let id = try context.uuidParameter("device", what: "device")
            let body = try await request.decodeJSON(DeviceRegistration.self) { path in
                path == "type" || path == "pushEnvironment" ? Self.unknownValue(path) : nil
            }
            let (device, isNew) = try await devices.register(context.caller, id: id, body)
            return JSONResponse(device, status: isNew ? .created : .ok)
        }
        group.post("devices/:device/challenge") { request, context in
            var request = request
            let id = try context.uuidParameter("device", what: "device")
            let body = try await request.decodeJSON(DeviceChallengeRequest.self)
            return JSONResponse(try devices.challenge(context.caller, id: id, body))
        }
        group.put("devices/:device/push-token") { request, context in
            var request = request
            let id = try context.uuidParameter("device", what: "device")
            let body = try await request.decodeJSON(PushTokenRequest.self) { path in
                path == "environment" ? Self.unknownValue(path) : nil
            }
            return JSONResponse(try await devices.setPushToken(context.caller, device: id, body))
        }
        group.delete("devices/:device/push-token") { _, context in
            let id = try context.uuidParameter("device", what: "device")
            return JSONResponse(try await devices.setPushToken(context.caller, device: id, nil))
        }
        group.get("devices") { _, context in
            JSONResponse(try await devices.list(context.caller))
        }
        group.post("devices/:device/trust") { _, context in
            let id = try context.uuidParameter("device", what: "device")
            return JSONResponse(try await devices.trust(context.caller, device: id))
        }
        group.post("devices/:device/revoke") { _, context in
            let id = try context.uuidParameter("device", what: "device")
            return JSONResponse(try await devices.revoke(context.caller, device: id))
        }
        group.get("secrets") { _, context in
            JSONResponse(try await secrets.state(context.caller))
        }
        group.put("secrets") { request, context in
            var request = request
            let body = try await request.decodeJSON(StoreSecretsRequest.self, limit: secrets.limits.maximumSecretsBytes)
            return JSONResponse(try await secrets.store(context.caller, body))
        }
    }

    /// 422 `invalid_device` for an unknown device type or push environment, listing the accepted values.
    private static func unknownValue(_ path: String) -> APIError {
        let accepted = path == "type" ? DeviceKind.allCases.map(\.rawValue) : PushEnvironment.allCases.map(\.rawValue)
        return APIError(.unprocessableContent, .invalidDevice, "\(path) must be one of: \(accepted.joined(separator: ", ")).")
    }
}

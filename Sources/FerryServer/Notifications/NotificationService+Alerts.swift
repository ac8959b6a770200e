import FerryCore
import Foundation

extension NotificationService {
    /// The most devices one alert goes to (an account's devices, or a space's members' devices).
    static let maximumAlertTargets = 200
    /// Sends of one alert in flight at once.
    static let alertConcurrency = 50
    /// How long one alert's send may take: the request's other steps and every batch fit in the request deadline.
    static let alertSendTimeout: Duration = .seconds(3)
    /// APNs' limit on a notification's payload.
    static let maximumPayloadBytes = 4096

    /// Sends a visible notification (`POST /sync/v1/notifications`) at once, not queued: to the caller's other devices,
    /// or to the devices of `request.space`'s members, never to the calling device.
    func sendAlert(_ caller: SyncCaller, _ request: AlertRequest) async throws -> AlertReply {
        if let wait = await alertLimiter.attempt(caller.userID.lowercasedText) { throw ServiceError.rateLimited(wait) }
        var encrypted = false
        if let space = request.space {
            guard let summary = try await spaces.spaces(userID: caller.userID).first(where: { $0.id == space }) else {
                throw ServiceError(.notFound, .spaceNotFound, "No space \(space.lowercasedText) among this account's spaces.")
            }
            guard summary.role.canWrite else {
                throw ServiceError(.forbidden, .insufficientRole, "A viewer of space \(space.lowercasedText) cannot notify its members; only those who may write can.")
            }
            encrypted = summary.isEncrypted
        }
        let payload = try Self.alertPayload(request, encrypted: encrypted, from: caller.device?.id)
        let targets = try await storage.alertTargets(
            userID: caller.userID, space: request.space, excluding: caller.device?.id, limit: Self.maximumAlertTargets
        )
        let notification = APNsNotification(pushType: "alert", priority: 10, payload: payload, collapseID: nil, expiration: Date().addingTimeInterval(86_400))
        // At most `alertConcurrency` sends at once, each bounded well inside the request deadline: a slow APNs answers
        // the caller with failures rather than holding the request past its deadline (which would answer 503 after
        // some devices were already reached, inviting a retry that shows the alert twice).
        var deliveries: [(AlertTarget, APNsDelivery)] = []
        for start in stride(from: 0, to: targets.count, by: Self.alertConcurrency) {
            let batch = targets[start..<min(start + Self.alertConcurrency, targets.count)]
            deliveries += await withTaskGroup(of: (AlertTarget, APNsDelivery).self) { group in
                for target in batch {
                    group.addTask {
                        (target, await self.apns.send(notification, to: target.deviceToken, environment: target.environment, timeout: Self.alertSendTimeout))
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        var reply = AlertReply(sent: 0, failed: 0, tokensCleared: 0)
        for (target, delivery) in deliveries {
            let queued = QueuedNotification(
                deviceID: target.deviceID, deviceToken: target.deviceToken, environment: target.environment, space: request.space ?? caller.userID,
                seq: 0, version: 0, attempts: 0
            )
            switch outcome(of: delivery, for: queued, kind: "alert") {
            case .sent: reply.sent += 1
            case .tokenRejected:
                reply.tokensCleared += 1
                try? await storage.clearPushToken(deviceID: target.deviceID, token: target.deviceToken)
            case .retry, .dropped: reply.failed += 1
            }
        }
        return reply
    }

    /// The APNs payload: the text in clear, or for an encrypted space the sealed text with `mutable-content` so the
    /// app's Notification Service Extension opens it. 422 `invalid_notification` for what breaks a rule.
    static func alertPayload(_ request: AlertRequest, encrypted: Bool, from device: UUID?) throws -> Data {
        func invalid(_ message: String) -> ServiceError { ServiceError(.unprocessable, .invalidNotification, message) }
        var alert: [String: JSONValue] = [:]
        var ferry: [String: JSONValue] = [:]
        if let space = request.space { ferry["space"] = .string(space.lowercasedText) }
        if let device { ferry["from"] = .string(device.lowercasedText) }
        var aps: [String: JSONValue] = [:]
        if encrypted {
            guard request.title == nil, request.body == nil else {
                throw ServiceError(.unprocessable, .encryptionRequired,
                    "Space \(request.space?.lowercasedText ?? "") is end-to-end encrypted: send the text sealed with the space's key in 'sealed' (and an optional 'placeholder'), never 'title' or 'body' in clear."
                )
            }
            guard let sealed = request.sealed, !sealed.isEmpty else { throw invalid("An encrypted space's notification needs 'sealed', its text sealed with the space's key.") }
            ferry["sealed"] = .string(sealed)
            alert["title"] = .string(request.placeholder ?? "New activity")
            aps["mutable-content"] = 1
        } else {
            guard request.sealed == nil else { throw invalid("'sealed' is for end-to-end encrypted spaces; send 'title' and 'body' in clear here.") }
            guard request.title?.isEmpty == false || request.body?.isEmpty == false else { throw invalid("A notification needs a 'title' or a 'body'.") }
            if let title = request.title { alert["title"] = .string(title) }
            if let body = request.body { alert["body"] = .string(body) }
        }
        aps["alert"] = .object(alert)
        if let thread = request.thread {
            guard thread.utf8.count <= 64 else { throw invalid("'thread' has at most 64 bytes.") }
            aps["thread-id"] = .string(thread)
        }
        if let badge = request.badge {
            guard (0...99_999).contains(badge) else { throw invalid("'badge' is between 0 and 99999.") }
            aps["badge"] = .number(Double(badge))
        }
        aps["sound"] = "default"
        let payload = Data(try JSONValueEncoder().encodeText(JSONValue.object(["aps": .object(aps), "ferry": .object(ferry)])))
        guard payload.count <= maximumPayloadBytes else {
            throw ServiceError(.tooLarge, .invalidNotification, "The notification takes \(payload.count) bytes; APNs takes at most \(maximumPayloadBytes). Shorten the text.")
        }
        return payload
    }
}

import AsyncHTTPClient
import FerryCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// One notification for APNs: its kind, urgency and JSON payload.
struct APNsNotification: Sendable {
    /// `apns-push-type`: `background` wakes the app silently, `alert` shows something.
    var pushType: String
    /// `apns-priority`: 5 for background notifications (Apple requires it), 10 to deliver an alert at once.
    var priority: Int
    /// The JSON body, at most 4 KiB.
    var payload: Data
    /// `apns-collapse-id`: a later notification with the same id replaces an undelivered one on the device.
    var collapseID: String?
    /// `apns-expiration`: how long APNs keeps trying a device that is offline; `nil` tries once.
    var expiration: Date?
}

/// What APNs made of a notification.
enum APNsDelivery: Sendable, Equatable {
    /// Accepted (`200`).
    case delivered
    /// The token is no longer valid for this app (`410 Unregistered`, `400 BadDeviceToken`): never use it again.
    case tokenRejected(reason: String)
    /// APNs or the network failed for now (`429`, `5xx`, an expired provider token, a connection error): try later.
    case retryLater(reason: String)
    /// Refused for a reason trying again will not change (a bad topic, an oversized payload): drop it.
    case refused(reason: String)
}

/// Sends notifications over HTTP/2, one connection per APNs host kept and reused (AsyncHTTPClient pools them).
final class APNsClient: Sendable {
    private let settings: HTTPClient.Configuration
    /// Made at the first send: a server that never sends (or never runs) has no client to shut down.
    private let made = Mutex<(client: HTTPClient?, isShutDown: Bool)>((nil, false))
    private let token: APNsProviderToken
    private let topic: String
    private let productionURL: String
    private let sandboxURL: String

    init(configuration: NotificationConfiguration) throws {
        guard configuration.isEnabled, let keyFile = configuration.keyFile, let keyID = configuration.keyID,
              let teamID = configuration.teamID, let topic = configuration.topic
        else { throw APNsProviderToken.KeyFileError(description: "APNs needs a key file, key id, team id and topic") }
        token = try APNsProviderToken(keyFile: keyFile, keyID: keyID, teamID: teamID)
        self.topic = topic
        productionURL = configuration.productionURL.trimmingSuffix("/")
        sandboxURL = configuration.sandboxURL.trimmingSuffix("/")
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw APNsProviderToken.KeyFileError(description: "cannot read the APNs CA file \(caFile)")
            }
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var settings = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(10), read: .seconds(20)))
        settings.httpVersion = .automatic
        self.settings = settings
    }

    /// Sends `notification` to the device with `deviceToken`; never throws (every failure is an ``APNsDelivery``).
    func send(
        _ notification: APNsNotification, to deviceToken: String, environment: PushEnvironment, timeout: Duration = .seconds(30)
    ) async -> APNsDelivery {
        // The token goes into the URL's path: anything but hexadecimal is no APNs token.
        guard !deviceToken.isEmpty, deviceToken.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }) else {
            return .tokenRejected(reason: "BadDeviceToken")
        }
        let base = environment == .sandbox ? sandboxURL : productionURL
        var request = HTTPClientRequest(url: base + "/3/device/" + deviceToken)
        request.method = .POST
        let providerToken: String
        do {
            providerToken = try token.current()
        } catch {
            return .retryLater(reason: "provider token not signed")
        }
        request.headers.add(name: "authorization", value: "bearer " + providerToken)
        request.headers.add(name: "apns-push-type", value: notification.pushType)
        request.headers.add(name: "apns-priority", value: String(notification.priority))
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-expiration", value: String(Int(notification.expiration?.timeIntervalSince1970 ?? 0)))
        if let collapseID = notification.collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.payload))
        do {
            guard let http = client() else { return .retryLater(reason: "shutting down") }
            let response = try await http.execute(request, timeout: .seconds(max(1, timeout.components.seconds)))
            let body = try await response.body.collect(upTo: 16 * 1024)
            return delivery(status: Int(response.status.code), reason: Self.reason(in: body), providerToken: providerToken)
        } catch {
            return .retryLater(reason: "connection: \(type(of: error))")
        }
    }

    func shutdown() async {
        let client = made.withLock { made -> HTTPClient? in
            made.isShutDown = true
            return made.client
        }
        try? await client?.shutdown()
    }

    /// The one client, made on first use; `nil` once shut down.
    private func client() -> HTTPClient? {
        made.withLock { made in
            guard !made.isShutDown else { return nil }
            if let client = made.client { return client }
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
            made.client = client
            return client
        }
    }

    private func delivery(status: Int, reason: String, providerToken: String) -> APNsDelivery {
        switch (status, reason) {
        case (200, _): return .delivered
        // `DeviceTokenNotForTopic` is not among them: a wrong --apns-topic would otherwise clear every device's token.
        case (410, _), (400, "BadDeviceToken"): return .tokenRejected(reason: reason)
        case (403, "ExpiredProviderToken"):
            token.invalidate(providerToken)
            return .retryLater(reason: reason)
        // The key, key id or team id is wrong: signing again would not help (and APNs throttles new tokens), so the
        // notification waits for the operator to fix the configuration.
        case (403, "InvalidProviderToken"): return .retryLater(reason: reason)
        case (429, _), (500..., _): return .retryLater(reason: reason.isEmpty ? "status \(status)" : reason)
        default: return .refused(reason: reason.isEmpty ? "status \(status)" : reason)
        }
    }

    /// The `reason` of APNs' JSON error body, or `""`.
    private static func reason(in body: ByteBuffer) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))
        return ((object as? [String: Any])?["reason"] as? String) ?? ""
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

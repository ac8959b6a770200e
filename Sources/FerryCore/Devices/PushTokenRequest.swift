import Foundation

/// The body of `PUT /sync/v1/devices/{id}/push-token`: the APNs token the system gave the app on this device.
public struct PushTokenRequest: Sendable, Hashable, Codable {
    /// The token's bytes as hexadecimal text (what `didRegisterForRemoteNotificationsWithDeviceToken` hands over,
    /// hex-encoded).
    public var token: String
    /// Which APNs the token belongs to: `sandbox` for development builds, `production` for TestFlight and the App Store.
    public var environment: PushEnvironment

    /// Creates a request.
    public init(token: String, environment: PushEnvironment) {
        self.token = token
        self.environment = environment
    }
}

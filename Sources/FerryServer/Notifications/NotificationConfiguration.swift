import Foundation

/// Apple Push Notification service (APNs), token-based: the key that signs provider tokens and where to send.
///
/// Notifications are off until ``keyFile``, ``keyID``, ``teamID`` and ``topic`` are all set.
public struct NotificationConfiguration: Sendable {
    /// The `.p8` file Apple issued (a PKCS#8 P-256 private key in PEM).
    public var keyFile: String?
    /// The key's 10-character id, from the developer account.
    public var keyID: String?
    /// The developer team's id: the provider token's issuer.
    public var teamID: String?
    /// The app's bundle id, sent as `apns-topic`.
    public var topic: String?
    /// APNs for devices whose token is a production one.
    public var productionURL = "https://api.push.apple.com"
    /// APNs for devices whose token is a development (sandbox) one.
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// A PEM file of certificates trusted beside the system's (tests, or a proxy in front of APNs).
    public var caFile: String?
    /// How long a commit's background notification waits for more commits to coalesce with.
    public var coalescingDelay: Duration = .seconds(1)
    /// The least time between two background notifications to one device: iOS throttles more than a few an hour, and
    /// a device that syncs on the first pulls every later change anyway.
    public var minimumInterval: Duration = .seconds(15 * 60)
    /// Visible notifications (``NotificationService/sendAlert``) one account may send per minute.
    public var alertsPerMinute = 30

    /// Creates a configuration with notifications off.
    public init() {}

    /// Whether every setting notifications need is present.
    public var isEnabled: Bool {
        [keyFile, keyID, teamID, topic].allSatisfy { !($0 ?? "").isEmpty }
    }
}

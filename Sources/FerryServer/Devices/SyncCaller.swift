import FerryCore
import Foundation

/// The verified caller of a `/sync/v1` request: the account, the session, and the device the session is bound to.
struct SyncCaller: Sendable {
    /// The verified access token and its session.
    var account: AuthService.Caller
    /// The registered device the session is bound to, as of this request; `nil` for a session that registered none.
    var device: DeviceRecord?
    /// The account's spaces, read with the session when the route asked for them (the pull's does); `nil` otherwise.
    var spaces: [SpaceSummary]?
    /// Whether ``spaces`` came from memory (``SessionContextCache``), where a commit or a membership made on another
    /// instance may not have arrived yet: a pull that finds them behind its cursors reads them again.
    var spacesMayLag = false

    /// The account.
    var userID: UUID { account.userID }
    /// The session of the access token.
    var sessionID: UUID { account.sessionID }
    /// The caller's device, which must be trusted: approving, revoking and sealing keys need one.
    func trustedDevice() throws -> DeviceRecord {
        guard let device else {
            throw ServiceError(.forbidden, .deviceNotRegistered,
                "This session is not bound to a device; register it with PUT /sync/v1/devices/{id} first."
            )
        }
        guard device.trust == .trusted else {
            throw ServiceError(.forbidden, .deviceNotTrusted,
                "Device \(device.id.lowercasedText) is \(device.trust.rawValue); only a trusted device may do this, so approve it from one first."
            )
        }
        return device
    }
}

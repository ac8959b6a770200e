import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// Turns a `/sync/v1` request's bearer token into a ``SyncCaller``, within the request deadline: the token and its
/// session are verified, and a bound device is checked (revoked → 403) and marked as seen.
struct SyncAuthenticator: Sendable {
    let auth: AuthService
    let devices: DeviceService
    /// How long a request may wait on the database.
    let deadline: Duration

    /// Runs database work within the request deadline.
    func withinDeadline<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withTimeout(deadline, work)
    }

    /// The verified caller of `request`.
    func caller(_ request: Request) async throws -> SyncCaller {
        let authorization = request.headers[.authorization]
        return try await withinDeadline { [auth, devices] in
            try await devices.caller(try await auth.authenticate(authorization: authorization))
        }
    }
}

import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads and updates the signed-in user's profile (`/sync/v1/profile`) through an ``AuthClient``.
public struct ProfileClient: ProfileSource {
    /// The client whose session authorizes the requests.
    public let auth: AuthClient

    /// Creates a profile client that signs its requests with `auth`'s session.
    public init(auth: AuthClient) {
        self.auth = auth
    }

    /// Reads the profile (`GET /sync/v1/profile`).
    public func profile() async throws -> ProfileState {
        try await auth.send(ServerRequest("GET", "sync/v1/profile"), as: ProfileState.self, what: "profile")
    }

    @discardableResult
    public func update(fields: [String: JSONValue]) async throws -> ProfileState {
        try await auth.send(try .json("PATCH", "sync/v1/profile", body: ["fields": fields]), as: ProfileState.self, what: "profile")
    }
}

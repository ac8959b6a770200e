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
        try await send("GET", body: nil)
    }

    /// Sets `fields` on the profile (creating it when missing) and returns the profile as it is now.
    ///
    /// Fields not named are left alone; a `.null` value clears a field.
    @discardableResult
    public func update(fields: [String: JSONValue]) async throws -> ProfileState {
        try await send("PATCH", body: try JSONEncoder().encode(["fields": fields]))
    }

    private func send(_ method: String, body: Data?) async throws -> ProfileState {
        var request = URLRequest(url: auth.endpoint.url(path: "sync/v1/profile"))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let data = try await auth.authorizedData(for: request)
        do {
            return try JSONDecoder().decode(ProfileState.self, from: data)
        } catch {
            throw AuthError.unreadable("profile", status: 200)
        }
    }
}

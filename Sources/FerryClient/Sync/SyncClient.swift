import FerryCore
import FerrySecurity
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sync routes of a Ferry server (`/sync/v1`), sent through an ``AuthClient``'s session.
///
/// Every request goes through the SDK's one pipeline (``AuthClient/send(_:)``): the `apikey` and bearer headers,
/// one refresh and retry on `401 bad_jwt`. Failures are ``RemoteError``s (the server's code and message, or
/// `network_unavailable` / `request_timed_out` when no answer came), or ``AuthError`` when the session is over.
public struct SyncClient: SyncRemote, DeviceRemote {
    /// The client whose session authorizes the requests.
    public let auth: AuthClient

    /// Creates a client that signs its requests with `auth`'s session.
    public init(auth: AuthClient) {
        self.auth = auth
    }

    /// Pushes a batch of mutations; the reply comes after the server committed them.
    public func push(_ request: PushRequest) async throws -> PushResponse {
        try await auth.send(.message("POST", "sync/v1/push", request), as: PushResponse.self, what: "push result")
    }

    /// Pulls the changes after `request`'s cursors.
    public func pull(_ request: PullRequest) async throws -> PullResponse {
        try await auth.send(.message("POST", "sync/v1/pull", request), as: PullResponse.self, what: "pull result")
    }

    /// The server's schema.
    public func schema() async throws -> Schema {
        try await send("GET", "sync/v1/schema", expecting: Schema.self, what: "schema")
    }

    /// The spaces the user belongs to, personal space included.
    public func spaces() async throws -> [SpaceSummary] {
        try await send("GET", "sync/v1/spaces", expecting: SpaceList.self, what: "space list").spaces
    }

    /// Creates a shared space owned by the user.
    public func createSpace(_ request: CreateSpaceRequest) async throws -> SpaceSummary {
        try await send("POST", "sync/v1/spaces", body: request, expecting: SpaceSummary.self, what: "space")
    }

    /// Asks the server for a challenge sealed to `registration.publicKey`, opens it with `keys` and registers with
    /// the answer: two requests.
    public func registerDevice(_ id: UUID, _ registration: DeviceRegistration, keys: DeviceKeyPair) async throws -> Device {
        let path = "sync/v1/devices/\(id.lowercasedText)"
        let challenge = try await send(
            "POST", path + "/challenge", body: DeviceChallengeRequest(publicKey: registration.publicKey), expecting: DeviceChallenge.self,
            what: "device challenge"
        )
        guard let encapsulatedKey = Data(base64Encoded: challenge.encapsulatedKey), let ciphertext = Data(base64Encoded: challenge.ciphertext) else {
            throw RemoteError.unreadable("device challenge", status: 200)
        }
        let nonce = try DeviceProofSealer.open(encapsulatedKey: encapsulatedKey, ciphertext: ciphertext, deviceID: id, with: keys)
        var registration = registration
        registration.proof = DeviceProof(nonce: nonce.base64EncodedString(), expiresAt: challenge.expiresAt)
        return try await send("PUT", path, body: registration, expecting: Device.self, what: "device")
    }

    /// Registers the APNs token the system gave this app on device `id` (the session's own device), so the server can
    /// wake it with a background notification when another device writes. Call it from
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` with the token's bytes.
    public func registerPushToken(_ token: Data, environment: PushEnvironment, device id: UUID) async throws -> Device {
        let hex = token.map { String(format: "%02x", $0) }.joined()
        return try await send(
            "PUT", "sync/v1/devices/\(id.lowercasedText)/push-token", body: PushTokenRequest(token: hex, environment: environment),
            expecting: Device.self, what: "device"
        )
    }

    /// Forgets device `id`'s push token: the server stops waking it (a sign-out, or notifications turned off).
    public func clearPushToken(device id: UUID) async throws -> Device {
        try await send("DELETE", "sync/v1/devices/\(id.lowercasedText)/push-token", expecting: Device.self, what: "device")
    }

    /// Sends a visible notification to this account's other devices or a space's members (`POST /sync/v1/notifications`);
    /// in an end-to-end encrypted space, seal the text with ``AlertSealer`` into ``AlertRequest/sealed``.
    public func sendAlert(_ request: AlertRequest) async throws -> AlertReply {
        try await send("POST", "sync/v1/notifications", body: request, expecting: AlertReply.self, what: "notification")
    }

    /// Everything the server holds for this account, as a ZIP archive (`GET /sync/v1/export`): the account, the
    /// profile, the devices, the spaces and their records, and the files the records name.
    public func exportArchive() async throws -> Data {
        try await auth.send(ServerRequest("GET", "sync/v1/export")).data
    }

    public func devices() async throws -> [Device] {
        try await send("GET", "sync/v1/devices", expecting: DeviceList.self, what: "device list").devices
    }

    public func trustDevice(_ id: UUID) async throws -> Device {
        try await send("POST", "sync/v1/devices/\(id.lowercasedText)/trust", expecting: Device.self, what: "device")
    }

    public func revokeDevice(_ id: UUID) async throws -> Device {
        try await send("POST", "sync/v1/devices/\(id.lowercasedText)/revoke", expecting: Device.self, what: "device")
    }

    public func secrets() async throws -> SecretsState {
        try await send("GET", "sync/v1/secrets", expecting: SecretsState.self, what: "sealed keys")
    }

    public func storeSecrets(_ request: StoreSecretsRequest) async throws -> StoreSecretsResponse {
        try await send("PUT", "sync/v1/secrets", body: request, expecting: StoreSecretsResponse.self, what: "sealed key results")
    }

    private struct SpaceList: Decodable { var spaces: [SpaceSummary] }

    /// Sends one request through the session and decodes its JSON reply; `Empty` for a `204` without a body.
    func send<Response: Decodable & Sendable>(
        _ method: String, _ path: String, body: (any Encodable)? = nil, expecting: Response.Type, what: String
    ) async throws -> Response {
        let request = try ServerRequest.json(method, path, body: body)
        if Response.self == Empty.self, let empty = Empty() as? Response {
            _ = try await auth.send(request)
            return empty
        }
        return try await auth.send(request, as: Response.self, what: what)
    }
}

struct Empty: Decodable {}

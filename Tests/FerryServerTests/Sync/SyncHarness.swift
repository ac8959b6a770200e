import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// One device of one user talking `/sync/v1` over HTTP, as the SDK does, with its own clock and mutation ids.
struct SyncDevice {
    let auth: AuthHarness
    let session: AuthSession
    let deviceID = UUID()
    var clock: HybridClock
    var nextMutationID: Int64 = 1
    /// The cursors this device has pulled to.
    var cursors: [UUID: Int64] = [:]

    var userID: UUID { session.user.id }

    init(auth: AuthHarness, session: AuthSession) {
        self.auth = auth
        self.session = session
        self.clock = HybridClock(node: deviceID.uuidString.lowercased())
    }

    /// A new account's first device; `bound` registers it, binding its session (a push needs that).
    static func signUp(_ server: any ServerUnderTest, _ name: String = "user", bound: Bool = true) async throws -> SyncDevice {
        let auth = AuthHarness(server: server)
        let device = SyncDevice(auth: auth, session: try await auth.signUp(uniqueEmail(name)))
        if bound { try await device.bind() }
        return device
    }

    /// A second device of the same account.
    func sibling(bound: Bool = true) async throws -> SyncDevice {
        let device = SyncDevice(auth: auth, session: try await auth.signIn(session.user.email))
        if bound { try await device.bind() }
        return device
    }

    /// Registers this device with a fresh key, binding its session to it (`PUT /sync/v1/devices/{id}`).
    func bind() async throws {
        let keys = DeviceKeyPair.generate()
        let registration = DeviceRegistration(name: "Test device", type: .linux, hostname: "host.local", publicKey: keys.publicKeyBase64)
        let reply = try await register(registration, keys: keys)
        guard reply.status == 200 || reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
    }

    /// The challenge of `POST /sync/v1/devices/{id}/challenge` for `publicKey`, opened with `keys`, as a proof.
    func proof(for publicKey: String, keys: DeviceKeyPair, device: UUID? = nil) async throws -> DeviceProof {
        let id = device ?? deviceID
        let reply = try await send("POST", "/sync/v1/devices/\(id.uuidString.lowercased())/challenge", DeviceChallengeRequest(publicKey: publicKey))
        let challenge = try auth.decode(reply, as: DeviceChallenge.self)
        let nonce = try DeviceProofSealer.open(
            encapsulatedKey: try #require(Data(base64Encoded: challenge.encapsulatedKey)), ciphertext: try #require(Data(base64Encoded: challenge.ciphertext)),
            deviceID: id, with: keys
        )
        return DeviceProof(nonce: nonce.base64EncodedString(), expiresAt: challenge.expiresAt)
    }

    /// `PUT /sync/v1/devices/{id}` (this device's id unless `device` names another) with a proof made with `keys`,
    /// as the SDK registers.
    func register(_ registration: DeviceRegistration, keys: DeviceKeyPair, device: UUID? = nil) async throws -> HTTPClient.Reply {
        let id = device ?? deviceID
        var registration = registration
        registration.proof = try await proof(for: registration.publicKey, keys: keys, device: id)
        return try await send("PUT", "/sync/v1/devices/\(id.uuidString.lowercased())", registration)
    }

    mutating func upsert(_ collection: String, space: UUID? = nil, _ fields: [String: JSONValue], now: Date = Date()) -> Mutation {
        upsert(collection, UUID(), space: space, fields, now: now)
    }

    mutating func upsert(_ collection: String, _ id: UUID, space: UUID? = nil, _ fields: [String: JSONValue], now: Date = Date()) -> Mutation {
        let clock = self.clock.tick(now: now)
        defer { nextMutationID += 1 }
        return Mutation(
            mutationId: nextMutationID, space: space ?? userID, collection: collection, id: id, op: .upsert,
            fields: fields, clocks: fields.mapValues { _ in clock }
        )
    }

    mutating func delete(_ collection: String, _ id: UUID, space: UUID? = nil) -> Mutation {
        let clock = self.clock.tick()
        defer { nextMutationID += 1 }
        return Mutation(
            mutationId: nextMutationID, space: space ?? userID, collection: collection, id: id, op: .delete,
            clocks: [RecordState.deletedKey: clock]
        )
    }

    func send(_ method: String, _ path: String, _ body: some Encodable) async throws -> HTTPClient.Reply {
        try await auth.send(method, path, body: try JSONEncoder().encode(body), token: session.accessToken)
    }

    /// Sends a sync message, written by its one writer.
    func send(_ method: String, _ path: String, _ message: some JSONTextWritable) async throws -> HTTPClient.Reply {
        try await auth.send(method, path, body: Data(JSONValueEncoder().encodeText(message)), token: session.accessToken)
    }

    func get(_ path: String) async throws -> HTTPClient.Reply {
        try await auth.send("GET", path, token: session.accessToken)
    }

    func push(_ mutations: [Mutation], cursors: [UUID: Int64] = [:]) async throws -> PushResponse {
        try auth.decode(try await send("POST", "/sync/v1/push", PushRequest(deviceId: deviceID, mutations: mutations, cursors: cursors)))
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        try auth.decode(try await send("POST", "/sync/v1/pull", request))
    }

    /// Pulls until nothing more waits; returns every change and the number of requests.
    mutating func pullAll(limit: Int? = nil) async throws -> (changes: [Change], requests: Int) {
        var changes: [Change] = []
        var requests = 0
        while true {
            let page = try await pull(PullRequest(cursors: cursors, limit: limit))
            requests += 1
            changes += page.changes
            cursors.merge(page.cursors) { _, new in new }
            if !page.hasMore { return (changes, requests) }
        }
    }

    func createSpace(_ name: String) async throws -> SpaceSummary {
        let reply = try await send("POST", "/sync/v1/spaces", CreateSpaceRequest(name: name))
        guard reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
        return try JSONDecoder().decode(SpaceSummary.self, from: reply.body)
    }

    /// Sends an invitation (`POST /sync/v1/spaces/{space}/invitations`); its reply holds the code.
    func invite(_ email: String, to space: UUID, as role: SpaceRole, expiresIn: Int? = nil) async throws -> HTTPClient.Reply {
        try await send("POST", "/sync/v1/spaces/\(space.uuidString.lowercased())/invitations", InviteRequest(email: email, role: role, expiresIn: expiresIn))
    }

    /// Redeems an invitation code (`POST /sync/v1/invitations/accept`).
    func accept(_ code: String) async throws -> HTTPClient.Reply {
        try await send("POST", "/sync/v1/invitations/accept", AcceptInvitationRequest(code: code))
    }

    /// Invites `other`'s account into `space` and has it redeem the code: the consent path to membership.
    func share(_ space: UUID, with other: SyncDevice, as role: SpaceRole) async throws {
        let reply = try await invite(other.session.user.email, to: space, as: role)
        guard reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
        let invitation = try JSONDecoder().decode(SpaceInvitation.self, from: reply.body)
        let accepted = try await other.accept(invitation.code ?? "")
        guard accepted.status == 200 else { throw AuthHarness.HarnessError(reply: accepted) }
    }
}

/// Rows as a device would hold them after applying changes in order: the latest state per record.
func latestRows(_ changes: [Change]) -> [UUID: Change] {
    var rows: [UUID: Change] = [:]
    for change in changes { rows[change.id] = change }
    return rows
}

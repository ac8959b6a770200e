import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// What an authenticated request reads beside its token (`DeviceStorage.sessionContext`): the pull's authentication
/// reads the account's spaces in the same round trip, every other route only the session and its device.
@Suite("Devices: a session's context")
struct SessionContextTests {
    @Test("the session, its device and, when asked, the account's spaces as spaces(userID:) lists them", arguments: TestEngine.available)
    func context(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            _ = try await owner.createSpace("Zebra crossing")
            _ = try await owner.createSpace("Acme")
            let unbound = try await owner.sibling(bound: false)
            let storage = try #require(server.server.storage as? any DeviceStorage & SpaceStorage)
            let listed = try await storage.spaces(userID: owner.userID)
            #expect(listed.count == 3)

            let sessionID = try #require(UUID(uuidString: TokenIssuerTests.sessionID(owner.session.accessToken)))
            let full = try #require(try await storage.sessionContext(id: sessionID, withSpaces: true))
            #expect(full.session.id == sessionID && full.session.userID == owner.userID)
            #expect(full.device?.id == owner.deviceID)
            #expect(full.spaces == listed)
            let bare = try #require(try await storage.sessionContext(id: sessionID, withSpaces: false))
            #expect(bare.session == full.session && bare.device?.id == owner.deviceID && bare.spaces == nil)

            // An unbound session has no device, and the same spaces.
            let otherID = try #require(UUID(uuidString: TokenIssuerTests.sessionID(unbound.session.accessToken)))
            let other = try #require(try await storage.sessionContext(id: otherID, withSpaces: true))
            #expect(other.device == nil && other.spaces == listed)

            #expect(try await storage.sessionContext(id: UUID(), withSpaces: true) == nil)
        }
    }
}

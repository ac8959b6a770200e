@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// A connect storm (every device of a restarted instance at once) is turned away cheaply past a bound, so it waits at
/// the clients instead of queueing in the server.
@Suite("Realtime: admitting streams")
struct StreamAdmissionTests {
    @Test("past the streams being admitted at once, a stream request is refused 503 too_many_streams with Retry-After, before its token is read; then admitted again",
          arguments: TestEngine.available)
    func openingBound(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.realtime.maximumOpeningStreams = 2
        }) { server in
            let device = try await SyncDevice.signUp(server, "storm")
            let hub = server.server.hub
            #expect(hub.beginOpening() && hub.beginOpening())
            #expect(!hub.beginOpening(), "over the bound, and counting nothing")

            let refused = try await device.get("/sync/v1/stream")
            #expect(refused.status == 503 && refused.text.contains("too_many_streams"), "\(refused.status) \(refused.text)")
            #expect(refused.header("Retry-After") == "1")
            let unauthenticated = try await device.auth.send("GET", "/sync/v1/stream", token: "nonsense")
            #expect(unauthenticated.status == 503, "refused before the token is read: \(unauthenticated.status)")
            #expect(try await device.get("/sync/v1/spaces").status == 200, "other requests go on")

            hub.endOpening()
            let admitted = try await device.get("/sync/v1/stream")
            #expect(admitted.status == 426, "admitted, and refused only for not asking for the upgrade: \(admitted.text)")
            #expect(hub.beginOpening(), "the admitted request's count was given back")
            hub.endOpening()
            hub.endOpening()
        }
    }

    @Test("once the server is shutting down, a stream request is refused 503 unavailable with Retry-After, and no stream opens",
          arguments: TestEngine.available)
    func refusedWhileClosing(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await SyncDevice.signUp(server, "closing")
            let hub = server.server.hub
            hub.closeAll()
            let refused = try await device.get("/sync/v1/stream")
            #expect(refused.status == 503 && refused.text.contains("service_unavailable"), "\(refused.status) \(refused.text)")
            #expect(refused.header("Retry-After") == "1")
            #expect(throws: RealtimeHub.Refusal.closing) { try hub.open(userID: UUID(), deviceID: nil, spaces: [:]) }
            #expect(hub.count == 0)
        }
    }
}

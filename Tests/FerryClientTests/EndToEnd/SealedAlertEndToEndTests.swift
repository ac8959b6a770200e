import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// An alert to an encrypted space: sealed by the sender with the space key, carried as ciphertext by the server and
/// APNs, opened on the receiving device as its Notification Service Extension would.
@Suite("Sealed alerts, end to end")
struct SealedAlertEndToEndTests {
    @Test("the Mac tells the phone a session needs input: only ciphertext reaches the server and APNs; the phone opens it", arguments: TestEngine.available)
    func sealedAlert(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await LiveServer.with(engine, schema: try ExampleSchemas.text("unbound.yaml"), configure: { configuration in
                configuration.useFastPasswordHashing()
                apns.configure(&configuration)
            }) { server in
                let (mac, email, space) = try await EncryptedDevice.ownerWithEncryptedSpace(server, prefix: "sealed-alert")
                let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
                _ = await phone.postLogin().run()
                _ = try await mac.client.trustDevice(phone.id)
                try await mac.sync()
                try await phone.sync()
                let token = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
                _ = try await phone.client.registerPushToken(token, environment: .sandbox, device: phone.id)

                let secret = "Session 7 needs input: approve rm -rf build?"
                let sealed = try AlertSealer(store: mac.store, deviceKeys: mac.keys).seal(.init(title: "Claude", body: secret), space: space)
                let refused = await #expect(throws: RemoteError.self) {
                    try await mac.client.sendAlert(AlertRequest(space: space, title: "Claude", body: secret))
                }
                #expect(refused?.code == "encryption_required", "\(String(describing: refused))")
                let reply = try await mac.client.sendAlert(AlertRequest(space: space, thread: "session-7", sealed: sealed, placeholder: "A session needs you"))
                #expect(reply.sent == 1)
                let request = try #require(await apns.waitForRequests(count: 1, timeout: .seconds(30)).first)
                #expect(!String(decoding: request.body, as: UTF8.self).contains("Session 7") && !String(decoding: request.body, as: UTF8.self).contains("Claude"))
                let ferry = try #require(request.json?["ferry"] as? [String: Any])
                let opened = try AlertSealer(store: phone.store, deviceKeys: phone.keys).open(try #require(ferry["sealed"] as? String), space: space)
                #expect(opened == AlertSealer.Text(title: "Claude", body: secret))
                #expect(throws: (any Error).self, "sealed for one space, it opens in no other") {
                    try AlertSealer(store: phone.store, deviceKeys: phone.keys).open(sealed, space: UUID())
                }
            }
        }
    }
}

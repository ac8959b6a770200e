import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// A poke carries its commit's changes when they are small: read once after the commit, the same bytes for every
/// stream of the space, covering a range of sequence numbers a device applies only from a cursor that meets it.
@Suite("Realtime: changes carried in the poke")
struct CarriedChangesTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    /// The next batch of `slot`'s mailbox, within 10 seconds.
    static func next(_ slot: RealtimeHub.Slot) async throws -> StreamMailbox.Batch {
        let mailbox = slot.mailbox
        return try #require(try await withTimeout(.seconds(10)) { await mailbox.next() }, "the mailbox closed")
    }

    /// The stream slots of `devices`, opened on their spaces' current sequence numbers.
    static func open(_ server: RouterServer, _ devices: [SyncDevice]) async throws -> [RealtimeHub.Slot] {
        var slots: [RealtimeHub.Slot] = []
        for device in devices {
            let spaces = try await server.server.records.spaces(userID: device.userID)
            slots.append(try server.server.hub.open(
                userID: device.userID, deviceID: device.deviceID, spaces: Dictionary(uniqueKeysWithValues: spaces.map { ($0.id, $0.seq) })
            ))
        }
        return slots
    }

    static func note(_ device: inout SyncDevice, _ text: String) -> Mutation {
        device.upsert("sermons", ["title": .string(text), "date": "2026-11-29T10:00:00Z"])
    }

    @Test("a small commit reaches the space's streams with its changes, each range following on from the last, the pushing device's too", arguments: TestEngine.available)
    func carried(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server, "carry")
            var pad = try await phone.sibling()
            let space = phone.userID
            let slots = try await Self.open(server, [phone, pad])
            defer { for slot in slots { server.server.hub.close(slot.id) } }
            let (phoneSlot, padSlot) = (slots[0], slots[1])

            let first = Self.note(&phone, "Advent 1")
            #expect(try await phone.push([first]).results.first?.status == .applied)
            let announced = try #require(try await Self.next(padSlot).changes[space])
            let message = try #require(announced.carried.first)
            #expect(announced.carried.count == 1 && message.seq == announced.seq)
            guard case .change(space, let seq, let carried?) = StreamMessage(jsonText: message.text) else {
                Issue.record("not a carrying change message: \(message.text)")
                return
            }
            #expect(seq == message.seq && carried.after == message.after && carried.after < seq)
            #expect(carried.pull.cursors == [space: seq] && !carried.pull.hasMore)
            #expect(carried.pull.changes.map(\.id) == [first.id] && carried.pull.changes.first?.fields["title"] == "Advent 1")

            // The pad's write follows on: the phone, which also heard of its own commit (a read may hold other devices'
            // commits besides the pusher's), holds both messages in order.
            let second = Self.note(&pad, "Advent 2")
            #expect(try await pad.push([second]).results.first?.status == .applied)
            var toPhone: [CarriedMessage] = []
            while toPhone.last?.text.contains("Advent 2") != true {
                let batch = try await Self.next(phoneSlot)
                toPhone += try #require(batch.changes[space]).carried
            }
            #expect(toPhone.map(\.after) == [carried.after, seq], "\(toPhone.map(\.text))")
            #expect(toPhone.last?.text.contains("Advent 1") == false)
        }
    }

    @Test("a commit over the byte budget, or with carrying off, is a plain poke", arguments: TestEngine.available)
    func plainPokes(_ engine: TestEngine) async throws {
        for budget in [2048, 0] {
            try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
                AuthHarness.fastHashing(&configuration)
                configuration.realtime.carriedChangeBytes = budget
            }) { server in
                var phone = try await SyncDevice.signUp(server, "big")
                let pad = try await phone.sibling()
                let slots = try await Self.open(server, [pad])
                defer { server.server.hub.close(slots[0].id) }
                let text = budget == 0 ? "small" : String(repeating: "long sermon ", count: 400)
                let response = try await phone.push([Self.note(&phone, text)])
                #expect(response.results.first?.status == .applied)
                let announced = try #require(try await Self.next(slots[0]).changes[phone.userID])
                #expect(announced.carried.isEmpty && announced.seq >= 1, "budget \(budget)")
            }
        }
    }

    @Test("a stream whose request began before an account change opens not current and asks for a check", arguments: TestEngine.available)
    func staleOpen(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server, "stale")
            let pad = try await phone.sibling()
            let hub = server.server.hub
            let started = hub.accountChangesHeard.load(ordering: .sequentiallyConsistent)
            hub.deliver(.accountChanged(UUID()))  // anyone's: the stream cannot tell whose
            let spaces = Dictionary(uniqueKeysWithValues: try await server.server.records.spaces(userID: pad.userID).map { ($0.id, $0.seq) })
            let slot = try hub.open(userID: pad.userID, deviceID: pad.deviceID, spaces: spaces, changesAtStart: started)
            defer { hub.close(slot.id) }
            #expect(!hub.isCurrent(slot.id))
            #expect(try await Self.next(slot).recheck, "it asks itself for a check")
            #expect(try await phone.push([Self.note(&phone, "before the check")]).results.first?.status == .applied)
            #expect(try #require(try await Self.next(slot).changes[phone.userID]).carried.isEmpty)

            let fresh = try hub.open(
                userID: pad.userID, deviceID: pad.deviceID, spaces: spaces,
                changesAtStart: hub.accountChangesHeard.load(ordering: .sequentiallyConsistent)
            )
            defer { hub.close(fresh.id) }
            #expect(hub.isCurrent(fresh.id))
        }
    }

    @Test("account changes are counted per hub: another server's in the same process leave this one's streams current")
    func accountChangesPerHub() throws {
        let this = RealtimeHub(limits: RealtimeLimits()), other = RealtimeHub(limits: RealtimeLimits())
        let started = this.accountChangesHeard.load(ordering: .sequentiallyConsistent)
        other.deliver(.accountChanged(UUID()))
        other.deliver(.resync)
        #expect(this.accountChangesHeard.load(ordering: .sequentiallyConsistent) == started)
        #expect(other.accountChangesHeard.load(ordering: .sequentiallyConsistent) == 2)
        let slot = try this.open(userID: UUID(), deviceID: nil, spaces: [:], changesAtStart: started)
        defer { this.close(slot.id) }
        #expect(this.isCurrent(slot.id))
    }

    @Test("from an account change until the stream has checked its session, its pokes carry nothing", arguments: TestEngine.available)
    func accountChangeStopsCarrying(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server, "recheck")
            let pad = try await phone.sibling()
            let hub = server.server.hub
            let slots = try await Self.open(server, [pad])
            defer { hub.close(slots[0].id) }
            let changes = hub.accountChanges(of: slots[0].id)
            hub.deliver(.accountChanged(pad.userID))
            #expect(try await Self.next(slots[0]).recheck)

            #expect(try await phone.push([Self.note(&phone, "while unchecked")]).results.first?.status == .applied)
            #expect(try #require(try await Self.next(slots[0]).changes[phone.userID]).carried.isEmpty)

            // Spaces read before the account change heard last do not make the stream current.
            let spaces = Dictionary(uniqueKeysWithValues: try await server.server.records.spaces(userID: pad.userID).map { ($0.id, $0.seq) })
            hub.update(slots[0].id, spaces: spaces, readAfter: changes)
            #expect(try await phone.push([Self.note(&phone, "read too early")]).results.first?.status == .applied)
            #expect(try #require(try await Self.next(slots[0]).changes[phone.userID]).carried.isEmpty)

            hub.update(slots[0].id, spaces: spaces, readAfter: hub.accountChanges(of: slots[0].id))
            #expect(try await phone.push([Self.note(&phone, "checked")]).results.first?.status == .applied)
            let announced = try #require(try await Self.next(slots[0]).changes[phone.userID])
            #expect(announced.carried.first?.text.contains("checked") == true)
        }
    }
}

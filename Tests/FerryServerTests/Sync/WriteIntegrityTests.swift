import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// docs/architecture.md invariants 1–4 and 12 against the pushes that used to break them, on both engines.
@Suite("Sync: no acknowledged write lost, no change skipped")
struct WriteIntegrityTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    static func sermon(_ title: String) -> [String: JSONValue] {
        ["title": .string(title), "date": "2026-11-21T10:00:00Z"]
    }

    @Test("a store made again under a kept device id reuses mutation ids: refused whole with the last id, never `duplicate`", arguments: TestEngine.available)
    func reusedMutationIDs(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pad = try await phone.sibling()
            let firstBatch = [phone.upsert("sermons", Self.sermon("One")), phone.upsert("sermons", Self.sermon("Two")), phone.upsert("sermons", Self.sermon("Three"))]
            let first = try await phone.push(firstBatch)
            #expect(first.results.map(\.status) == [.applied, .applied, .applied] && first.lastMutationId == 3)

            // `ferry reset`: the store is new, the device id kept, so ids start at 1 again.
            phone.nextMutationID = 1
            let fourth = phone.upsert("sermons", Self.sermon("Four"))
            let stale = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: [fourth]))
            #expect(stale.status == 409 && stale.errorCode == "mutation_id_stale")
            #expect((try stale.json())["last_mutation_id"] as? Int == 3)
            #expect(try await pad.pullAll().changes.count == 3, "the refused push changed nothing")

            // Numbered after the server's last id, as the SDK does on `mutation_id_stale`, the write lands.
            var renumbered = fourth
            renumbered.mutationId = 4
            #expect(try await phone.push([renumbered]).results.map(\.status) == [.applied])
            #expect(try await pad.pullAll().changes.count == 1)
            // A real replay is still a duplicate, of the last push or of an earlier one.
            #expect(try await phone.push([renumbered]).results.map(\.status) == [.duplicate])
            #expect(try await phone.push(firstBatch).results.map(\.status) == [.duplicate, .duplicate, .duplicate])
            #expect(try await pad.pullAll().changes.isEmpty, "replays change nothing")
        }
    }

    @Test("the last four full pushes replay as `duplicate` (the SDK acknowledges one while three more are on the wire); an older one is stale", arguments: TestEngine.available)
    func replayWindow(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            var pushes: [[Mutation]] = []
            for push in 0..<5 {
                let batch = (0..<1000).map { phone.upsert("sermons", Self.sermon("Push \(push) sermon \($0)")) }
                #expect(try await phone.push(batch).results.allSatisfy { $0.status == .applied })
                pushes.append(batch)
            }
            // A crash after the fifth reply, before the second's acknowledgement committed: all four are sent again.
            for batch in pushes[1...] {
                #expect(try await phone.push(batch).results.allSatisfy { $0.status == .duplicate })
            }
            // One entry of a push in the window, sent again alone: still found.
            #expect(try await phone.push([pushes[2][500]]).results.map(\.status) == [.duplicate])
            let stale = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: pushes[0]))
            #expect(stale.status == 409 && stale.errorCode == "mutation_id_stale")
            var altered = pushes[4][999]
            altered.fields["title"] = "Changed"
            let reused = try await phone.send("POST", "/sync/v1/push", PushRequest(deviceId: phone.deviceID, mutations: [altered]))
            #expect(reused.status == 409 && reused.errorCode == "mutation_id_stale", "the last id held, with another write")
        }
    }

    @Test("a push names only the device its session is bound to; a huge id under another device's name blocks nothing", arguments: TestEngine.available)
    func pushBoundToSessionDevice(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var laptop = try await SyncDevice.signUp(server)
            var intruder = try await laptop.sibling()
            var forged = intruder.upsert("sermons", Self.sermon("Forged"))
            forged.mutationId = 9_007_199_254_740_991
            let reply = try await intruder.send("POST", "/sync/v1/push", PushRequest(deviceId: laptop.deviceID, mutations: [forged]))
            #expect(reply.status == 403 && reply.errorCode == "device_mismatch")
            let unbound = try await laptop.sibling(bound: false)
            let unboundReply = try await unbound.send("POST", "/sync/v1/push", PushRequest(deviceId: laptop.deviceID, mutations: [forged]))
            #expect(unboundReply.status == 403 && unboundReply.errorCode == "device_not_registered")
            #expect(try await intruder.pullAll().changes.isEmpty, "nothing changed")

            let own = try await laptop.push([laptop.upsert("sermons", Self.sermon("Mine"))])
            #expect(own.results.map(\.status) == [.applied] && own.lastMutationId == 1)
        }
    }

    @Test("the merged record is checked: delete, upsert under a foreign parent and undelete in one push leave nothing", arguments: TestEngine.available)
    func mergedRecordValidation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var attacker = try await SyncDevice.signUp(server, "attacker")
            var victim = try await SyncDevice.signUp(server, "victim")
            let foreign = UUID()
            #expect(try await victim.push([victim.upsert("sermons", foreign, Self.sermon("Victim's"))]).results.map(\.status) == [.applied])
            _ = try await attacker.pullAll()

            let note = UUID()
            let delete = attacker.delete("notes", note)
            let upsert = attacker.upsert("notes", note, ["sermon_id": .string(foreign.uuidString.lowercased()), "text": "planted"])
            var undelete = attacker.upsert("notes", note, ["text": "planted"])
            undelete.clocks[RecordState.deletedKey] = attacker.clock.tick()
            let reply = try await attacker.push([delete, upsert, undelete])
            #expect(reply.results.map(\.status) == [.rejected, .rejected, .rejected])
            #expect(reply.results[1].code == "space_mismatch")
            #expect(!(reply.results[1].message ?? "").contains(victim.userID.uuidString.lowercased()), "messages never name a foreign space")
            #expect(try await attacker.pullAll().changes.isEmpty, "no tombstone and no live note were written")

            // The same order with the attacker's own sermon is fine: rules judge the merged record, not each step.
            let own = UUID()
            let ownSermon = attacker.upsert("sermons", own, Self.sermon("Own"))
            let ownDelete = attacker.delete("notes", note)
            let ownUpsert = attacker.upsert("notes", note, ["sermon_id": .string(own.uuidString.lowercased()), "text": "fine"])
            var ownUndelete = attacker.upsert("notes", note, ["text": "fine"])
            ownUndelete.clocks[RecordState.deletedKey] = attacker.clock.tick()
            let accepted = try await attacker.push([ownSermon, ownDelete, ownUpsert, ownUndelete])
            #expect(accepted.results.map(\.status) == [.applied, .applied, .applied, .applied])
            let rows = latestRows(try await attacker.pullAll().changes)
            #expect(rows[note]?.deleted == false && rows[note]?.fields["sermon_id"] == .string(own.uuidString.lowercased()))
        }
    }

    @Test("a replayed push answers a write it refused `rejected` again, with its code: a lost reply never turns a refusal into `duplicate`", arguments: TestEngine.available)
    func replayedRefusal(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let batch = [
                phone.upsert("sermons", Self.sermon("Kept")),
                phone.upsert("notes", ["sermon_id": .string(UUID().uuidString.lowercased()), "text": "orphan"]),
            ]
            let first = try await phone.push(batch)
            #expect(first.results.map(\.status) == [.applied, .rejected] && first.results[1].code == "parent_missing")
            // The reply was lost: the device sends the same push again, and then a fresh one behind it.
            let replay = try await phone.push(batch)
            #expect(replay.results.map(\.status) == [.duplicate, .rejected])
            #expect(replay.results[1].code == "parent_missing" && replay.results[1].message?.isEmpty == false)
            let fresh = try await phone.push([batch[1], phone.upsert("sermons", Self.sermon("Next"))])
            #expect(fresh.results.map(\.status) == [.rejected, .applied], "the replayed refusal, and a new write beside it")
        }
    }

    @Test("a write that empties a required field or a live child's parent link is refused, as a new record without them is", arguments: TestEngine.available)
    func requiredNeverEmptied(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var phone = try await SyncDevice.signUp(server)
            let sermon = UUID(), note = UUID()
            let link: JSONValue = .string(sermon.uuidString.lowercased())
            let created = try await phone.push([phone.upsert("sermons", sermon, Self.sermon("Kept")), phone.upsert("notes", note, ["sermon_id": link, "text": "n"])])
            #expect(created.results.map(\.status) == [.applied, .applied])

            let emptied = try await phone.push([phone.upsert("sermons", sermon, ["title": .null]), phone.upsert("notes", note, ["sermon_id": .null])])
            #expect(emptied.results.map(\.status) == [.rejected, .rejected])
            #expect(emptied.results.map(\.code) == ["invalid_record", "invalid_record"])
            #expect(emptied.results[0].message?.contains("'title'") == true && emptied.results[1].message?.contains("'sermon_id'") == true)
            // An optional field may be emptied, and the record's other fields still change.
            let edited = try await phone.push([phone.upsert("sermons", sermon, ["title": "Renamed", "speaker": .null])])
            #expect(edited.results.map(\.status) == [.applied])

            let rows = latestRows(try await phone.pullAll().changes)
            #expect(rows[sermon]?.fields["title"] == "Renamed")
            #expect(rows[note]?.fields["sermon_id"] == link && rows[note]?.deleted == false)
        }
    }

    @Test("a unique value too long to index is refused per mutation, never a 5xx", arguments: TestEngine.available)
    func longUniqueValue(_ engine: TestEngine) async throws {
        let schema = """
            version: 1
            collections:
              tags:
                fields:
                  name: { type: text, required: true }
                unique: [name]
            """
        try await RouterServer.with(engine, schema: schema, configure: AuthHarness.fastHashing) { server in
            var device = try await SyncDevice.signUp(server)
            let long = String(repeating: "x", count: 8 * 1024)
            let reply = try await device.push([device.upsert("tags", ["name": .string(long)]), device.upsert("tags", ["name": "short"])])
            #expect(reply.results.map(\.status) == [.rejected, .applied])
            #expect(reply.results[0].code == "unique_value_too_long")
            let duplicate = try await device.push([device.upsert("tags", ["name": "short"])])
            #expect(duplicate.results.first?.code == "unique_violation")
        }
    }

    @Test("pulls with 7-row pages miss nothing while 6 devices push into two collections of one space", arguments: TestEngine.available)
    func pullSnapshot(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server)
            var writers: [SyncDevice] = [owner]
            for _ in 1..<6 { writers.append(try await owner.sibling()) }
            for round in 1...2 {
                var reader = try await owner.sibling()
                _ = try await reader.pullAll(limit: 7)
                let done = Mutex(false)
                let start = reader
                // Pull while the writers push: a page read outside one snapshot lets the cursor pass a late commit.
                async let reading: (Set<UUID>, SyncDevice) = {
                    var reader = start
                    var seen = Set<UUID>()
                    while !done.withLock({ $0 }) {
                        seen.formUnion(try await reader.pullAll(limit: 7).changes.map(\.id))
                    }
                    return (seen, reader)
                }()
                let written = try await withThrowingTaskGroup(of: (Int, Set<UUID>, SyncDevice).self) { group in
                    for (slot, device) in writers.enumerated() {
                        group.addTask {
                            var writer = device
                            var ids = Set<UUID>()
                            for index in 0..<100 {
                                let sermon = UUID(), note = UUID()
                                let batch = [
                                    writer.upsert("sermons", sermon, Self.sermon("r\(round) \(index)")),
                                    writer.upsert("notes", note, ["sermon_id": .string(sermon.uuidString.lowercased()), "text": "n"]),
                                ]
                                let reply = try await writer.push(batch)
                                #expect(reply.results.allSatisfy { $0.status == .applied })
                                ids.formUnion([sermon, note])
                            }
                            return (slot, ids, writer)
                        }
                    }
                    var written = Set<UUID>()
                    for try await (slot, ids, writer) in group {
                        written.formUnion(ids)
                        writers[slot] = writer
                    }
                    return written
                }
                done.withLock { $0 = true }
                var (seen, finished) = try await reading
                seen.formUnion(try await finished.pullAll(limit: 7).changes.map(\.id))
                #expect(written.count == 1200)
                let missed = written.subtracting(seen)
                #expect(missed.isEmpty, "round \(round): the reader missed \(missed.count) of \(written.count) records")
            }
        }
    }
}

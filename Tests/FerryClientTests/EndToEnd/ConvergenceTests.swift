import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// docs/architecture.md invariant 4 as a property: whatever devices write and whenever they sync, once every device has
/// synced after the last write, they all hold the same rows.
@Suite("Convergence, end to end", .serialized)
struct ConvergenceTests {
    typealias Device = SyncEndToEndTests.Device

    /// A small deterministic generator (SplitMix64), so a failing seed replays.
    struct Generator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

        mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[below(items.count)] }
    }

    @Test("three devices, random writes, deletes, undeletes and syncs in random order: all converge", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func converge(seed: UInt64) async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("converge")
            var devices: [Device] = []
            for index in 0..<3 {
                devices.append(try await Device.signIn(server, email: email, password: "correct horse 1", signUp: index == 0, localChangeDebounce: .seconds(3600)))
            }
            let all = devices
            var random = Generator(state: seed)
            var seen = Set<UUID>()
            var undeletes = 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in all { group.addTask { try await device.engine.run() } }
                defer { group.cancelAll() }
                for step in 0..<150 {
                    let device = all[random.below(all.count)]
                    let sermons = try device.store.fetchAll(collection: "sermons")
                    seen.formUnion(sermons.map(\.id))
                    switch random.below(10) {
                    case 0, 1:
                        try device.store.save(collection: "sermons", fields: ["title": .string("Sermon \(step)"), "date": "2026-11-01T10:00:00Z"])
                    case 2, 3:
                        if let sermon = random.pick(sermons) {
                            let field = random.pick(["title", "speaker", "duration"])!
                            let value: JSONValue = field == "duration" ? .number(Double(random.below(5000))) : .string("\(field) \(step)")
                            try device.store.save(collection: "sermons", id: sermon.id, fields: [field: value])
                        }
                    case 4:
                        if let sermon = random.pick(sermons) {
                            try device.store.save(collection: "notes", fields: ["sermon_id": .string(sermon.id.uuidString), "text": .string("Note \(step)")])
                        }
                    case 5:
                        if let note = random.pick(try device.store.fetchAll(collection: "notes")) {
                            try device.store.save(collection: "notes", id: note.id, fields: ["text": .string("Edited \(step)")])
                        }
                    case 6:
                        if let sermon = random.pick(sermons) { try device.store.delete(collection: "sermons", id: sermon.id) }
                    case 7:
                        // Undelete a record this device holds deleted (an explicit undelete with a newer clock).
                        let deleted = try seen.sorted { $0.uuidString < $1.uuidString }.filter { try device.store.fetch(collection: "sermons", id: $0, includeDeleted: true)?.isDeleted == true }
                        if let id = random.pick(deleted) {
                            try device.store.save(collection: "sermons", id: id, fields: ["speaker": "back"])
                            undeletes += 1
                        }
                    default:
                        try await device.engine.sync()
                    }
                }
                for _ in 0..<2 {
                    for device in all { try await device.engine.sync() }
                }
                // Records a device wrote and the server refused stay visible on that device only; leave them out.
                var refused = Set<UUID>()
                for device in all { refused.formUnion(try device.store.rejections().map(\.mutation.id)) }
                func snapshot(_ device: Device, _ collection: String) throws -> [UUID: [String: JSONValue]] {
                    var rows: [UUID: [String: JSONValue]] = [:]
                    for record in try device.store.fetchAll(collection: collection) where !refused.contains(record.id) {
                        rows[record.id] = record.fields.filter { !$0.value.isNull }
                        #expect(record.syncState == .synced, "nothing is pending after the final syncs")
                    }
                    return rows
                }
                for collection in ["sermons", "notes"] {
                    let reference = try snapshot(all[0], collection)
                    for (index, device) in all.enumerated().dropFirst() {
                        let rows = try snapshot(device, collection)
                        let differing = Set(rows.keys).union(reference.keys).filter { rows[$0] != reference[$0] }
                        let details = try differing.map { id in
                            "\(id): device 0 \(String(describing: reference[id])) \(try all[0].store.fetch(collection: collection, id: id, includeDeleted: true).map { "\($0.isDeleted) \($0.clocks) \($0.syncState)" } ?? "-"); device \(index) \(String(describing: rows[id])) \(try device.store.fetch(collection: collection, id: id, includeDeleted: true).map { "\($0.isDeleted) \($0.clocks) \($0.syncState)" } ?? "-")"
                        }
                        #expect(differing.isEmpty, "seed \(seed): \(collection) differ: \(details.joined(separator: "\n"))")
                    }
                }
                for device in all { #expect(try device.store.pendingCount() == 0) }
                #expect(undeletes > 0, "the run exercised explicit undeletes")
            }
        }
    }
}

import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Every field type's edge values written on a device, stored by the server on each engine, and read on another
/// device: all three stores convert with FerryCore's one codec, so nothing changes on the way.
@Suite("Values, round trip through every store")
struct ValueRoundTripTests {
    static let schema = """
        version: 1
        collections:
          samples:
            fields:
              t: text
              i: integer
              r: real
              b: bool
              ts: timestamp
              u: uuid
              j: json
              by: bytes
        """

    static let fieldOfType: [FieldType: String] = [
        .text: "t", .integer: "i", .real: "r", .bool: "b", .timestamp: "ts", .uuid: "u", .json: "j", .bytes: "by",
    ]

    @Test("each type's edge values come back unchanged from the server and on the other device", arguments: TestEngine.available)
    func roundTrip(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: Self.schema, configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("values")
            let phone = try await SyncEndToEndTests.Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await SyncEndToEndTests.Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                var written: [UUID: (String, JSONValue)] = [:]
                // Blob references name content the server must hold first: BlobEndToEndTests covers them.
                for (type, value) in FieldValueEdgeCases.all where type != .blob {
                    let field = try #require(Self.fieldOfType[type])
                    let record = try phone.store.save(collection: "samples", fields: [field: value])
                    written[record.id] = (field, value)
                }
                // Values in a wire form other than the canonical one are stored canonically.
                let loose = try phone.store.save(collection: "samples", fields: [
                    "ts": "2026-11-01T12:00:00+02:00", "u": "8E1B7C52-7A0E-4C55-9B8B-3F1A3E0D2A11",
                ])
                let report = try await phone.engine.sync()
                #expect(report.pushed == written.count + 1 && report.rejected == 0)
                _ = try await pad.engine.sync()
                for (id, (field, value)) in written {
                    #expect(try phone.store.fetch(collection: "samples", id: id)?.fields[field] == value, "\(field) on the writer")
                    #expect(try pad.store.fetch(collection: "samples", id: id)?.fields[field] == value, "\(field) \(value.jsonText) via \(engine)")
                }
                let canonical = try pad.store.fetch(collection: "samples", id: loose.id)?.fields
                #expect(canonical?["ts"] == "2026-11-01T10:00:00.000Z" && canonical?["u"] == "8e1b7c52-7a0e-4c55-9b8b-3f1a3e0d2a11")
            }
        }
    }
}

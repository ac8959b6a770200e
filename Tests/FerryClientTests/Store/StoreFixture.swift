import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Synchronization

/// Where a test's store lives: the same bodies run against an in-memory queue and a pool on a file.
enum StoreKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case memory
    case file

    var description: String { rawValue }
}

/// A store on the sermon-notes schema (the sermon app) with a frozen wall clock.
final class StoreFixture: Sendable {
    static let schema: Schema = try! SchemaParser.load(files: [ExampleSchemas.path("tabletnotes.yaml")])
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    let clock = TestClock(start)
    let space = UUID()
    let store: LocalStore
    private let folder: TemporaryFolder?

    init(schema: Schema = StoreFixture.schema, kind: StoreKind = .memory) throws {
        let clock = self.clock
        switch kind {
        case .memory:
            folder = nil
            store = try LocalStore.inMemory(schema: schema, defaultSpace: space, now: { clock.now })
        case .file:
            let folder = try TemporaryFolder()
            self.folder = folder
            store = try LocalStore(fileURL: folder.url.appending(path: "store.sqlite"), schema: schema, defaultSpace: space, now: { clock.now })
        }
    }

    deinit {
        folder?.remove()
    }

    /// A clock reading of another device, `offset` seconds after the fixture's start.
    func remoteClock(_ offset: TimeInterval, node: String = "other-device") -> HLC {
        HLC(milliseconds: Int64((Self.start.timeIntervalSince1970 + offset) * 1000), counter: 0, node: node)
    }

    static let sermonFields: [String: JSONValue] = [
        "title": "Sunday Service", "date": "2026-11-01T10:00:00.000Z",
    ]
}

import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Synchronization

/// A store on the sermon-notes schema (seed 004) with a frozen wall clock.
struct StoreFixture {
    static let schema: Schema = try! SchemaParser.load(files: [ExampleSchemas.path("tabletnotes.yaml")])
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    let clock = TestClock(start)
    let space = UUID()
    let store: LocalStore

    init(schema: Schema = StoreFixture.schema) throws {
        let clock = self.clock
        store = try LocalStore.inMemory(schema: schema, defaultSpace: space, now: { clock.now })
    }

    /// A clock reading of another device, `offset` seconds after the fixture's start.
    func remoteClock(_ offset: TimeInterval, node: String = "other-device") -> HLC {
        HLC(milliseconds: Int64((Self.start.timeIntervalSince1970 + offset) * 1000), counter: 0, node: node)
    }

    static let sermonFields: [String: JSONValue] = [
        "title": "Sunday Service", "date": "2026-11-01T10:00:00.000Z",
    ]
}

// Until FerryCore gives JSONValue its literals (main has them in flight): remove this when it does.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

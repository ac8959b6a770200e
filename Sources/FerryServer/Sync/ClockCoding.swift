import FerryCore
import Foundation

/// The `_clocks` column: a JSON object of field name to clock.
enum ClockCoding {
    static func encode(_ clocks: [String: HLC]) -> String {
        ClockMap.text(clocks)
    }

    /// Decodes the column; entries that are not clocks are dropped (they can only come from outside Ferry).
    static func decode(_ text: String) -> [String: HLC] {
        if let clocks = ClockMap.clocks(fromText: text) { return clocks }
        guard case .object(let members)? = JSONValue(jsonText: text) else { return [:] }
        return members.compactMapValues { $0.stringValue.flatMap(HLC.init) }
    }
}

extension HLC {
    /// The clock of a write the server makes itself (`PATCH /sync/v1/profile`): its wall time, node `server`.
    static func server(_ now: Date) -> HLC {
        HLC(milliseconds: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)), counter: 0, node: "server")
    }
}

extension JSONValue {
    /// Whether this value's JSON text certainly has more than `limit` bytes, found by walking only as far as needed.
    ///
    /// Counts a lower bound of the text (strings without escapes, one digit per number, no white space), so `true`
    /// is certain and costs a walk of about `limit` bytes of the value, whatever its size: a server refuses a huge
    /// record before encoding or hashing it.
    public func certainlyExceedsJSONSize(_ limit: Int) -> Bool {
        var budget = limit
        return !fits(&budget)
    }

    /// Subtracts this value's lower-bound size from `budget`; `false` as soon as it goes below zero.
    private func fits(_ budget: inout Int) -> Bool {
        switch self {
        case .null, .bool(true): budget -= 4
        case .bool(false): budget -= 5
        case .number: budget -= 1
        case .string(let text): budget -= text.utf8.count + 2
        case .array(let items):
            budget -= 2 + max(items.count - 1, 0)
            for item in items where budget >= 0 {
                guard item.fits(&budget) else { return false }
            }
        case .object(let members):
            budget -= 2 + max(members.count - 1, 0)
            for (name, member) in members where budget >= 0 {
                budget -= name.utf8.count + 3
                guard member.fits(&budget) else { return false }
            }
        }
        return budget >= 0
    }

    /// Whether this value's JSON text certainly has at most `limit` bytes, by an upper bound of its size (every string
    /// byte escaped as `\u00XX`, 32 bytes a number) that costs no encoding: a record far below the limit, as nearly
    /// every one is, need not be measured exactly.
    public func certainlyFitsJSONSize(_ limit: Int) -> Bool {
        var budget = limit
        return fitsUpperBound(&budget)
    }

    private func fitsUpperBound(_ budget: inout Int) -> Bool {
        switch self {
        case .null, .bool: budget -= 5
        case .number: budget -= 32
        case .string(let text): budget -= text.utf8.count * 6 + 2
        case .array(let items):
            budget -= 2 + items.count
            for item in items where budget >= 0 {
                guard item.fitsUpperBound(&budget) else { return false }
            }
        case .object(let members):
            budget -= 2 + members.count
            for (name, member) in members where budget >= 0 {
                budget -= name.utf8.count * 6 + 3
                guard member.fitsUpperBound(&budget) else { return false }
            }
        }
        return budget >= 0
    }
}

extension Change {
    /// About how many bytes this change takes in a pull reply's JSON, without encoding it.
    public var approximateWireBytes: Int {
        let clocks = clocksText?.utf8.count ?? self.clocks.reduce(0) { $0 + $1.key.utf8.count + 64 }
        return 200 + clocks + fields.reduce(0) { $0 + $1.key.utf8.count + 4 + $1.value.approximateJSONBytes }
    }
}

extension JSONValue {
    /// About how many bytes this value takes as JSON (strings without counting escapes), walked once.
    public var approximateJSONBytes: Int {
        switch self {
        case .null, .bool: 5
        case .number: 24
        case .string(let text): text.utf8.count + 2
        case .array(let items): items.reduce(2) { $0 + $1.approximateJSONBytes + 1 }
        case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.approximateJSONBytes }
        }
    }
}

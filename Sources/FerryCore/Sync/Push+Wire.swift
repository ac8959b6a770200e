import Foundation

// The push's messages, each with one JSON reader and one writer (docs/sync.md, "Push").

extension PushRequest: JSONTextWritable {
    public var approximateJSONByteCount: Int {
        mutations.reduce(256 + 64 * cursors.count) { total, mutation in
            total + 200 + (mutation.storedJSON.map { $0.fields.utf8.count + $0.clocks.utf8.count } ?? 400)
        }
    }

    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        if !cursors.isEmpty {
            object.key("cursors", &bytes)
            JSONValue.write(cursors, into: &bytes)
        }
        object.key("deviceId", &bytes)
        JSONValue.write(deviceId, into: &bytes)
        if let follows {
            object.key("follows", &bytes)
            bytes.append(contentsOf: String(follows).utf8)
        }
        object.key("mutations", &bytes)
        JSONObjectWriter.array(mutations, &bytes)
        object.end(&bytes)
    }
}

extension MutationResult: JSONTextWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        if let clocks {
            object.key("clocks", &bytes)
            ClockMap.write(clocks, into: &bytes)
        }
        if let code {
            object.key("code", &bytes)
            JSONValue.write(code, into: &bytes)
        }
        if let message {
            object.key("message", &bytes)
            JSONValue.write(message, into: &bytes)
        }
        object.key("mutationId", &bytes)
        bytes.append(contentsOf: String(mutationId).utf8)
        object.key("status", &bytes)
        JSONValue.write(status.rawValue, into: &bytes)
        object.end(&bytes)
    }
}

extension PushResponse: JSONTextWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        var object = JSONObjectWriter(&bytes)
        object.key("cursors", &bytes)
        JSONValue.write(cursors, into: &bytes)
        object.key("lastMutationId", &bytes)
        bytes.append(contentsOf: String(lastMutationId).utf8)
        if let maxInFlight {
            object.key("maxInFlight", &bytes)
            bytes.append(contentsOf: String(maxInFlight).utf8)
        }
        object.key("results", &bytes)
        JSONObjectWriter.array(results, &bytes)
        object.end(&bytes)
    }
}

extension PushRequest: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (deviceID, mutations, cursors, follows): (UUID?, [Mutation]?, [UUID: Int64], Int64?) = (nil, nil, [:], nil)
        try parser.readObject { parser, key in
            switch key {
            case "deviceId": deviceID = try parser.readUUID()
            case "follows": follows = try parser.readNull() ? nil : parser.readInt64()
            case "mutations":
                var items: [Mutation] = []
                try parser.readArray { parser in items.append(try Mutation(stream: &parser)) }
                mutations = items
            case "cursors": cursors = try parser.readSpaceKeyed(Int64.self)
            default: try parser.skipValue()
            }
        }
        self.init(
            deviceId: try parser.required(deviceID, "deviceId"), mutations: try parser.required(mutations, "mutations"), cursors: cursors,
            follows: follows
        )
    }
}

extension MutationResult: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (mutationID, status): (Int64?, Status?)
        var (code, message, clocks): (String?, String?, [String: HLC]?)
        try parser.readObject { parser, key in
            switch key {
            case "mutationId": mutationID = try parser.readInt64()
            case "status":
                guard let value = Status(rawValue: try parser.readString()) else { throw parser.corrupted("status must be applied, rejected or duplicate.") }
                status = value
            case "code": code = try parser.readNull() ? nil : parser.readString()
            case "message": message = try parser.readNull() ? nil : parser.readString()
            case "clocks": clocks = try parser.readNull() ? nil : parser.readClocks()
            default: try parser.skipValue()
            }
        }
        self.init(
            mutationId: try parser.required(mutationID, "mutationId"), status: try parser.required(status, "status"), code: code,
            message: message, clocks: clocks
        )
    }
}

extension PushResponse: JSONStreamReadable {
    package init(stream parser: inout JSONTextParser) throws {
        var (results, lastMutationID, cursors, maxInFlight): ([MutationResult]?, Int64?, [UUID: Int64], Int64?) = (nil, nil, [:], nil)
        try parser.readObject { parser, key in
            switch key {
            case "results":
                var items: [MutationResult] = []
                try parser.readArray { parser in items.append(try MutationResult(stream: &parser)) }
                results = items
            case "lastMutationId": lastMutationID = try parser.readInt64()
            case "cursors": cursors = try parser.readNull() ? [:] : parser.readSpaceKeyed(Int64.self)
            case "maxInFlight": maxInFlight = try parser.readNull() ? nil : parser.readInt64()
            default: try parser.skipValue()
            }
        }
        self.init(
            results: try parser.required(results, "results"), lastMutationId: try parser.required(lastMutationID, "lastMutationId"),
            cursors: cursors, maxInFlight: maxInFlight.map { Int(clamping: $0) }
        )
    }
}

import FerryCore
import Foundation

/// Every field type with its edge values, in canonical wire form: what the value codec's tests and the round trip
/// through every store write and expect back unchanged.
public enum FieldValueEdgeCases {
    public static let all: [(FieldType, JSONValue)] = [
        (.text, ""), (.text, "naïve 🚢 \"quoted\" \\ back"), (.integer, 0), (.integer, -9_007_199_254_740_991),
        (.integer, 9_007_199_254_740_991), (.real, 0.1), (.real, -1.5e300), (.real, .number(.leastNonzeroMagnitude)),  // 5e-324
        (.bool, true), (.bool, false),
        (.timestamp, "0000-02-29T12:00:00.000Z"), (.timestamp, "1970-01-01T00:00:00.000Z"), (.timestamp, "9999-12-31T23:59:59.999Z"),
        (.uuid, "00000000-0000-0000-0000-000000000000"), (.uuid, "8e1b7c52-7a0e-4c55-9b8b-3f1a3e0d2a11"),
        (.json, ["a": [1, "two", nil, ["b": false]]]), (.json, []), (.json, "text"), (.json, 3),
        (.bytes, ""), (.bytes, .string(Data([0, 1, 2, 255, 254]).base64EncodedString())),
        (.blob, ["sha256": .string(String(repeating: "0", count: 64)), "size": 0, "content_type": "application/octet-stream"]),
        (.blob, ["sha256": .string(String(repeating: "af", count: 32)), "size": 9_007_199_254_740_991, "content_type": "audio/mp4"]),
    ]
}

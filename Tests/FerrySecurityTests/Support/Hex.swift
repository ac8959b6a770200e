import Foundation

extension Data {
    /// Bytes from a hex string such as `"4f6465"`; traps on malformed hex, which is a typo in a fixture.
    init(hex: String) {
        precondition(hex.count.isMultiple(of: 2), "hex strings have an even length")
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}

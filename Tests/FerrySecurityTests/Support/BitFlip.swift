import Foundation

/// Which part of a sealed or encrypted message a bit-flip test alters.
enum MessagePart: String, CaseIterable, CustomStringConvertible, Sendable {
    case encapsulatedKey = "encapsulated key"
    case nonce
    case ciphertext
    case tag

    var description: String { rawValue }
}

extension Data {
    /// A copy with bit `bit` (0–7) of the byte at `offset` (from the start of the data) flipped.
    func flippingBit(_ bit: Int, at offset: Int) -> Data {
        var copy = self
        copy[copy.startIndex + offset] ^= UInt8(1) << UInt8(bit)
        return copy
    }
}

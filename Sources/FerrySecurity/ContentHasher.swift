import Crypto
import Foundation

/// SHA-256 of content fed in pieces, as the 64 lowercase hexadecimal digits a blob's address uses.
public struct ContentHasher: Sendable {
    private var hasher = SHA256()

    /// Starts an empty hash.
    public init() {}

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// Adds bytes.
    public mutating func update(_ data: Data) {
        hasher.update(data: data)
    }

    /// The hash of everything added, in lowercase hexadecimal.
    public func finalize() -> String {
        Self.hex(hasher.finalize())
    }

    /// The SHA-256 of `text`'s UTF-8 bytes, in lowercase hexadecimal.
    public static func sha256(_ text: String) -> String {
        hex(SHA256.hash(data: Data(text.utf8)))
    }

    /// Bytes (a digest, a MAC) as lowercase hexadecimal.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

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
        hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

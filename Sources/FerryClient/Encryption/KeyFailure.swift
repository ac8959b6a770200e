import FerryCore
import Foundation

/// A space key this device could not make, open or hand to another device; the next sync tries again.
public struct KeyFailure: Sendable, Hashable, Codable {
    /// The encrypted space.
    public var space: UUID
    /// The device the key was for (this one when making or opening a key).
    public var device: UUID
    /// The key version.
    public var keyVersion: Int
    /// A stable machine code (the server's, or `EncryptionError`'s).
    public var code: String
    /// A message a person can act on.
    public var message: String

    /// Creates a failure.
    public init(space: UUID, device: UUID, keyVersion: Int, code: String, message: String) {
        self.space = space
        self.device = device
        self.keyVersion = keyVersion
        self.code = code
        self.message = message
    }
}

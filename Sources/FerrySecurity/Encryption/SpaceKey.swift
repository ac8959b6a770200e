import Crypto
import Foundation

/// The symmetric key of an encrypted space: 32 random bytes made on a trusted device, with its version.
///
/// The server never sees it; each trusted device receives it sealed to its own public key (``SpaceKeySealer``).
/// Revoking a device makes a new key with the next version. Printing a key shows only its version.
public struct SpaceKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The number of bytes of a space key.
    public static let byteCount = 32

    /// The key version: 1 for the space's first key, one more after each rotation.
    public let version: Int

    let symmetricKey: SymmetricKey

    /// A new key of `version` (default 1) from the system's secure random generator.
    ///
    /// Throws `invalid_key_version` when `version` is not positive.
    public static func generate(version: Int = 1) throws -> SpaceKey {
        try SpaceKey(symmetricKey: SymmetricKey(size: .bits256), version: version)
    }

    /// Restores a key from its 32 raw bytes; throws `invalid_key_length` for another length and
    /// `invalid_key_version` when `version` is not positive.
    public init(rawRepresentation raw: Data, version: Int) throws {
        guard raw.count == Self.byteCount else {
            throw EncryptionError(
                code: .invalidKeyLength,
                message: "A space key must be \(Self.byteCount) bytes, not \(raw.count); the key was damaged or is not a Ferry space key."
            )
        }
        try self.init(symmetricKey: SymmetricKey(data: raw), version: version)
    }

    init(symmetricKey: SymmetricKey, version: Int) throws {
        guard version >= 1 else {
            throw EncryptionError(
                code: .invalidKeyVersion,
                message: "A space key version must be 1 or more, not \(version); versions count up from 1 with each rotation."
            )
        }
        self.symmetricKey = symmetricKey
        self.version = version
    }

    /// The key's 32 raw bytes, for sealing and for the device's own key store only: never log, print or send them.
    public var rawRepresentation: Data { symmetricKey.withUnsafeBytes { Data($0) } }

    /// Whether both keys have the same version and bytes, compared in constant time.
    public static func == (lhs: SpaceKey, rhs: SpaceKey) -> Bool {
        lhs.version == rhs.version && lhs.symmetricKey == rhs.symmetricKey
    }

    /// Names the version only; the key bytes are redacted.
    public var description: String { "SpaceKey(version: \(version), <redacted>)" }

    /// Same as ``description``: the key bytes are redacted.
    public var debugDescription: String { description }

    /// A mirror without the key bytes, so `dump` and debuggers do not show them.
    public var customMirror: Mirror { Mirror(self, children: ["version": version, "key": "<redacted>"]) }
}

import Crypto
import Foundation

/// Encrypts files of end-to-end encrypted spaces in chunks, so they stream both ways and every chunk is authenticated
/// before any of its bytes are used (`docs/encryption.md`, "Files").
///
/// Format 1: a 40-byte header — `FRB1`, the space key's version (UInt32, big-endian), a random 32-byte salt — then
/// chunks of up to 64 KiB of plaintext, each sealed with ChaCha20-Poly1305 (ciphertext and 16-byte tag). The chunk key
/// is HKDF-SHA256 of the space key with the salt, bound to the space id, so no two files share a key; the nonce is
/// the chunk's index; the last chunk (possibly empty) is sealed with the associated byte 1 and the others with 0, so
/// a file cut at a chunk boundary, reordered or spliced from two files does not open. The salt makes the
/// ciphertext's hash, the blob's address, unrelated to the plaintext's.
public enum BlobCipher {
    /// Plaintext bytes per chunk.
    public static let chunkSize = 64 * 1024
    static let tagSize = 16
    static let magic: [UInt8] = Array("FRB1".utf8)
    static let headerSize = 40

    /// Encrypts the file at `source` into `target` (created 0600) under `key`, a key of `space`.
    public static func encrypt(_ source: URL, to target: URL, key: SpaceKey, space: UUID) throws {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        _ = try OwnerOnlyPath.file(target.path)
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        let salt = SecureRandom.bytes(32)
        var header = magic
        header += withUnsafeBytes(of: UInt32(key.version).bigEndian, Array.init)
        header += salt
        try output.write(contentsOf: Data(header))
        let chunkKey = derive(key, salt: salt, space: space)
        var index: UInt64 = 0
        var current = try input.readChunk(upToCount: chunkSize) ?? Data()
        while true {
            let next = current.count == chunkSize ? try input.readChunk(upToCount: chunkSize) ?? Data() : Data()
            let isLast = next.isEmpty
            let box = try ChaChaPoly.seal(current, using: chunkKey, nonce: nonce(index), authenticating: Data([isLast ? 1 : 0]))
            try output.write(contentsOf: box.ciphertext + box.tag)
            if isLast { break }
            current = next
            index += 1
        }
        try output.synchronize()
    }

    /// The key version a ciphertext file was sealed under, from its header.
    public static func keyVersion(of source: URL) throws -> Int {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        guard let header = try input.readChunk(upToCount: headerSize), header.count == headerSize, Array(header.prefix(4)) == magic else {
            throw malformed
        }
        return Int(header[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Decrypts the file at `source` into `target` (created 0600) with `key`, a key of `space`; `target` is removed
    /// when any chunk fails to open.
    public static func decrypt(_ source: URL, to target: URL, key: SpaceKey, space: UUID) throws {
        guard try keyVersion(of: source) == key.version else {
            throw EncryptionError(code: .keyVersionMismatch, message: "The file was encrypted under another version of the space key.")
        }
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        guard let header = try input.readChunk(upToCount: headerSize) else { throw malformed }
        _ = try OwnerOnlyPath.file(target.path)
        let output = try FileHandle(forWritingTo: target)
        do {
            defer { try? output.close() }
            let chunkKey = derive(key, salt: Array(header.suffix(32)), space: space)
            var index: UInt64 = 0
            var current = try input.readChunk(upToCount: chunkSize + tagSize) ?? Data()
            while true {
                guard current.count >= tagSize else { throw malformed }
                let next = try input.readChunk(upToCount: chunkSize + tagSize) ?? Data()
                let isLast = next.isEmpty
                let box = try ChaChaPoly.SealedBox(nonce: nonce(index), ciphertext: current.dropLast(tagSize), tag: current.suffix(tagSize))
                let plain: Data
                do {
                    plain = try ChaChaPoly.open(box, using: chunkKey, authenticating: Data([isLast ? 1 : 0]))
                } catch {
                    throw EncryptionError(code: .openFailed, message: "A chunk of the file does not open: it was changed, cut short, or sealed with another key.")
                }
                try output.write(contentsOf: plain)
                if isLast { break }
                current = next
                index += 1
            }
            try output.synchronize()
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw error
        }
    }

    private static func derive(_ key: SpaceKey, salt: [UInt8], space: UUID) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key.symmetricKey, salt: salt, info: Data("ferry blob v1 \(space.uuidString.lowercased())".utf8), outputByteCount: 32
        )
    }

    private static func nonce(_ index: UInt64) -> ChaChaPoly.Nonce {
        try! ChaChaPoly.Nonce(data: [0, 0, 0, 0] + withUnsafeBytes(of: index.bigEndian, Array.init))
    }

    private static var malformed: EncryptionError {
        EncryptionError(code: .malformedCiphertext, message: "The file is not a Ferry encrypted blob (format 1); it is damaged or was never encrypted.")
    }
}

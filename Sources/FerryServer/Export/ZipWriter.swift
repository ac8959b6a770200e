import Foundation

/// Writes a ZIP archive (PKWARE APPNOTE 6.3) of stored entries to a file: no compression (the exported files are
/// mostly audio and images already compressed, and JSON is small), no ZIP64, so each entry and the archive stay under
/// 4 GiB. Each entry's header is written first and its CRC-32 and sizes patched in once its bytes are written, so an
/// entry streams from its source without being held in memory.
final class ZipWriter {
    /// Why an archive could not be written.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private struct Entry {
        var name: [UInt8]
        var offset: UInt32
        var crc: UInt32
        var size: UInt32
    }

    private let handle: FileHandle
    private var entries: [Entry] = []
    private var offset: UInt64 = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "cannot create \(path)")
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    deinit {
        try? handle.close()
    }

    /// Adds an entry whose bytes are `data`.
    func add(_ name: String, data: Data) throws {
        try add(name) { write in try write(data) }
    }

    /// Adds an entry whose bytes `produce` hands, chunk by chunk, to the writer it is given.
    func add(_ name: String, produce: ((Data) throws -> Void) async throws -> Void) async throws {
        let start = try begin(name)
        var crc = CRC32(), size: UInt64 = 0
        try await produce { chunk in
            crc.update(chunk)
            size += UInt64(chunk.count)
            try self.write(chunk)
        }
        try finish(start, name: name, crc: crc.value, size: size)
    }

    /// The synchronous form of ``add(_:produce:)``.
    func add(_ name: String, produce: ((Data) throws -> Void) throws -> Void) throws {
        let start = try begin(name)
        var crc = CRC32(), size: UInt64 = 0
        try produce { chunk in
            crc.update(chunk)
            size += UInt64(chunk.count)
            try self.write(chunk)
        }
        try finish(start, name: name, crc: crc.value, size: size)
    }

    /// Writes the central directory and closes the file.
    func close() throws {
        let directoryStart = offset
        for entry in entries {
            var header = Data()
            header.append(le32: 0x0201_4b50)
            header.append(le16: 0x0314)  // made by: Unix, version 2.0 (so the mode below counts)
            header.append(le16: 20)  // needed: version 2.0
            header.append(le16: 0x0800)  // names are UTF-8
            header.append(le16: 0)  // stored
            header.append(le16: 0)
            header.append(le16: 0x21)  // 1980-01-01: the archive's contents carry their own dates
            header.append(le32: entry.crc)
            header.append(le32: entry.size)
            header.append(le32: entry.size)
            header.append(le16: UInt16(entry.name.count))
            header.append(le16: 0)
            header.append(le16: 0)
            header.append(le16: 0)
            header.append(le16: 0)
            header.append(le32: 0o100600 << 16)  // a regular file, owner read/write
            header.append(le32: entry.offset)
            header.append(contentsOf: entry.name)
            try write(header)
        }
        guard offset <= UInt64(UInt32.max), entries.count <= Int(UInt16.max) else { throw Failure(description: "the archive is over 4 GiB") }
        var end = Data()
        end.append(le32: 0x0605_4b50)
        end.append(le16: 0)
        end.append(le16: 0)
        end.append(le16: UInt16(entries.count))
        end.append(le16: UInt16(entries.count))
        end.append(le32: UInt32(offset - directoryStart))
        end.append(le32: UInt32(directoryStart))
        end.append(le16: 0)
        try write(end)
        try handle.synchronize()
        try handle.close()
    }

    private func begin(_ name: String) throws -> UInt64 {
        guard offset <= UInt64(UInt32.max) else { throw Failure(description: "the archive is over 4 GiB") }
        let start = offset
        var header = Data()
        header.append(le32: 0x0403_4b50)
        header.append(le16: 20)
        header.append(le16: 0x0800)
        header.append(le16: 0)
        header.append(le16: 0)
        header.append(le16: 0x21)
        header.append(le32: 0)  // CRC-32 and sizes: patched in by finish
        header.append(le32: 0)
        header.append(le32: 0)
        header.append(le16: UInt16(name.utf8.count))
        header.append(le16: 0)
        header.append(contentsOf: Array(name.utf8))
        try write(header)
        return start
    }

    private func finish(_ start: UInt64, name: String, crc: UInt32, size: UInt64) throws {
        guard size <= UInt64(UInt32.max) else { throw Failure(description: "\(name) is over 4 GiB") }
        var patch = Data()
        patch.append(le32: crc)
        patch.append(le32: UInt32(size))
        patch.append(le32: UInt32(size))
        try handle.seek(toOffset: start + 14)
        try handle.write(contentsOf: patch)
        try handle.seek(toOffset: offset)
        entries.append(Entry(name: Array(name.utf8), offset: UInt32(start), crc: crc, size: UInt32(size)))
    }

    private func write(_ data: Data) throws {
        try handle.write(contentsOf: data)
        offset += UInt64(data.count)
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as ZIP checks entries with.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    private var crc: UInt32 = 0xFFFF_FFFF

    mutating func update(_ data: Data) {
        var crc = self.crc
        for byte in data { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        self.crc = crc
    }

    var value: UInt32 { crc ^ 0xFFFF_FFFF }
}

extension Data {
    fileprivate mutating func append(le16 value: UInt16) {
        append(contentsOf: [UInt8(value & 0xFF), UInt8(value >> 8)])
    }

    fileprivate mutating func append(le32 value: UInt32) {
        append(contentsOf: [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)])
    }
}

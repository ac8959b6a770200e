@testable import FerryServer
import Testing

/// The reading of PostgreSQL's binary record form, which a pull's rows arrive in; PostgreSQL's own records are read
/// by every pull test on PostgreSQL, these are the bytes it never sends.
@Suite("PostgreSQL record cells")
struct PostgresRecordCellsTests {
    /// A record of `columns`: each an oid and its bytes, or `nil` for NULL.
    static func record(_ columns: [(oid: Int32, bytes: [UInt8]?)], count: Int32? = nil) -> [UInt8] {
        var bytes = bigEndian(count ?? Int32(columns.count))
        for column in columns {
            bytes += bigEndian(column.oid)
            if let value = column.bytes {
                bytes += bigEndian(Int32(value.count)) + value
            } else {
                bytes += bigEndian(-1)
            }
        }
        return bytes
    }

    static func bigEndian(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    @Test("reads each column's bytes, NULL as nil, and an empty value as empty")
    func readsColumns() {
        let bytes = Self.record([(20, [0, 0, 0, 0, 0, 0, 1, 2]), (25, nil), (25, Array("hé".utf8)), (25, [])])
        var cells = PostgresRecordCells(capacity: 4)
        bytes.withUnsafeBytes { raw in
            let read = cells.read(raw, count: 4)
            #expect(read)
            #expect(cells.bytes(0, in: raw).flatMap(PostgresRecordCells.int64) == 258)
            #expect(cells.bytes(1, in: raw) == nil)
            #expect(cells.bytes(2, in: raw).map { String(decoding: $0, as: UTF8.self) } == "hé")
            #expect(cells.bytes(3, in: raw)?.count == 0)
            #expect(cells.cells.map(\.oid) == [20, 25, 25, 25])
        }
    }

    @Test("refuses another column count, a length past the end, a cut header and bytes after the last column")
    func refusesMalformed() {
        let good = Self.record([(25, Array("abc".utf8)), (16, [1])])
        let cases: [(String, [UInt8], Int)] = [
            ("another count", good, 3),
            ("count in the bytes disagrees", Self.record([(25, Array("abc".utf8)), (16, [1])], count: 5), 2),
            ("length past the end", Array(good.dropLast()), 2),
            ("cut column header", Array(good.prefix(4 + 8 + 3 + 4)), 2),
            ("bytes after the last column", good + [0], 2),
            ("no count at all", [0, 0], 2),
            ("negative count", Self.bigEndian(-1), 2),
        ]
        for (name, bytes, count) in cases {
            var cells = PostgresRecordCells(capacity: 2)
            let read = bytes.withUnsafeBytes { cells.read($0, count: count) }
            #expect(!read, "\(name)")
        }
    }
}

import NIOCore
import PostgresNIO

/// The columns of one `ROW(…)` value in PostgreSQL's binary record form: a column count, then each column's type
/// oid, its length (-1 for NULL) and its bytes, as the column's own binary form.
///
/// A pull selects each row as one record rather than a cell per column: PostgresNIO makes every cell its own value
/// (a buffer slice, its column's name), and at eleven columns a row that was about a third of Ferry's CPU in a cold
/// pull. Reading the record is a walk over its bytes.
struct PostgresRecordCells {
    struct Cell {
        var oid: UInt32
        /// Where the column's bytes start in the record, or `nil` for NULL.
        var offset: Int?
        var length: Int
    }

    private(set) var cells: [Cell] = []

    init(capacity: Int) {
        cells.reserveCapacity(capacity)
    }

    /// Reads the columns of `record` (its readable bytes, offsets relative to them); false when the bytes are not a
    /// record of `count` columns.
    mutating func read(_ record: UnsafeRawBufferPointer, count: Int) -> Bool {
        cells.removeAll(keepingCapacity: true)
        guard record.count >= 4, Int(Self.int32(record, at: 0)) == count else { return false }
        var at = 4
        while cells.count < count {
            guard record.count - at >= 8 else { return false }
            let oid = UInt32(bitPattern: Self.int32(record, at: at))
            let length = Int(Self.int32(record, at: at + 4))
            at += 8
            if length < 0 {
                cells.append(Cell(oid: oid, offset: nil, length: 0))
                continue
            }
            guard record.count - at >= length else { return false }
            cells.append(Cell(oid: oid, offset: at, length: length))
            at += length
        }
        return at == record.count
    }

    /// Column `index`'s bytes, or `nil` for NULL.
    func bytes(_ index: Int, in record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let cell = cells[index]
        guard let offset = cell.offset else { return nil }
        return UnsafeRawBufferPointer(rebasing: record[offset..<offset + cell.length])
    }

    /// Column `index` as the cell PostgresNIO would have given for it, to decode it with PostgresNIO's decoders.
    func cell(_ index: Int, of record: ByteBuffer) -> PostgresCell {
        let cell = cells[index]
        let bytes = cell.offset.flatMap { record.getSlice(at: record.readerIndex + $0, length: cell.length) }
        return PostgresCell(bytes: bytes, dataType: PostgresDataType(cell.oid), format: .binary, columnName: "", columnIndex: index)
    }

    static func int32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int32 {
        Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    static func int64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        bytes.count == 8 ? Int64(bigEndian: bytes.loadUnaligned(as: Int64.self)) : nil
    }
}

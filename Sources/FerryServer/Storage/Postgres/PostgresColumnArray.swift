import FerryCore
import Foundation
import PostgresNIO

/// One column of a multi-row write, bound as a single PostgreSQL array in binary form, `NULL` elements allowed
/// (PostgresNIO's own arrays cannot hold them).
///
/// `INSERT … SELECT … FROM unnest($1::uuid[], $2::int8[], …)` has the same text for any number of rows, so the database
/// parses and plans it in microseconds. A `VALUES` list of 500 rows × 12 parameters was parsed, analysed and planned
/// afresh for every push: a third of PostgreSQL's time in a push.
struct PostgresColumnArray: PostgresDynamicTypeEncodable {
    /// The element type of a column of `type`, as bound: JSON goes as text and is cast in the statement.
    enum Element: Sendable {
        case text, integer, real, bool, timestamp, uuid, bytes, json

        init(_ type: FieldType) {
            self = switch type {
            case .text: .text
            case .integer: .integer
            case .real: .real
            case .bool: .bool
            case .timestamp: .timestamp
            case .uuid: .uuid
            case .bytes: .bytes
            case .json, .blob: .json
            }
        }

        fileprivate var types: (element: PostgresDataType, array: PostgresDataType) {
            switch self {
            case .text, .json: (.text, .textArray)
            case .integer: (.int8, .int8Array)
            case .real: (.float8, .float8Array)
            case .bool: (.bool, .boolArray)
            case .timestamp: (.timestamptz, .timestamptzArray)
            case .uuid: (.uuid, .uuidArray)
            case .bytes: (.bytea, .byteaArray)
            }
        }

        /// How the statement reads an element of this column: its array type, and the cast to the column's type.
        var sqlArrayType: String {
            switch self {
            case .text, .json: "text[]"
            case .integer: "int8[]"
            case .real: "float8[]"
            case .bool: "bool[]"
            case .timestamp: "timestamptz[]"
            case .uuid: "uuid[]"
            case .bytes: "bytea[]"
            }
        }
    }

    /// A value whose form is not the column's (a bug in the caller, never a client's input).
    struct MismatchedValue: Error {
        var element: Element
    }

    let element: Element
    private var elements = ByteBuffer()
    private var count: Int32 = 0
    private var hasNulls = false

    init(_ element: Element, capacity: Int) {
        self.element = element
        elements.reserveCapacity(capacity * 16)
    }

    var psqlType: PostgresDataType { element.types.array }
    var psqlFormat: PostgresFormat { .binary }

    /// Appends one row's value, as ``SQLDialect/columnValue(_:type:)`` gives it for PostgreSQL.
    mutating func append(_ value: SQLValue) throws {
        switch (element, value) {
        case (_, .null):
            elements.writeInteger(Int32(-1))
            hasNulls = true
        case (.text, .text(let text)), (.json, .json(let text)): write(text)
        case (.integer, .integer(let number)): write(number)
        case (.real, .real(let number)): write(number)
        case (.bool, .bool(let flag)): write(flag)
        case (.timestamp, .timestamp(let date)): write(date)
        case (.uuid, .uuid(let id)): write(id)
        case (.bytes, .bytes(let data)): write(ByteBuffer(bytes: data))
        default: throw MismatchedValue(element: element)
        }
        count += 1
    }

    /// Appends one row's value of a column the caller types itself.
    mutating func append(_ value: (some PostgresNonThrowingEncodable)?) {
        if let value { write(value) } else {
            elements.writeInteger(Int32(-1))
            hasNulls = true
        }
        count += 1
    }

    private mutating func write(_ value: some PostgresNonThrowingEncodable) {
        let lengthIndex = elements.writerIndex
        elements.writeInteger(Int32(0))
        value.encode(into: &elements, context: .default)
        elements.setInteger(Int32(elements.writerIndex - lengthIndex - 4), at: lengthIndex)
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        // PostgreSQL's binary array: dimensions, has-nulls flag, element type; per dimension its length and lower
        // bound; then each element as a length (-1 for NULL) and its bytes. An empty array has no dimension.
        buffer.writeInteger(Int32(count == 0 ? 0 : 1))
        buffer.writeInteger(Int32(hasNulls ? 1 : 0))
        buffer.writeInteger(element.types.element.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(count)
        buffer.writeInteger(Int32(1))
        buffer.writeImmutableBuffer(elements)
    }
}

import FerryCore
import Foundation
import GRDB

/// GRDB's side of FerryCore's value codec (`SQLDialect.sqlite.columnValue` / `wireValue`): SQLite's five storage
/// classes, shared by the server's SQLite storage and the device store.
extension SQLValue {
    /// The value of a column as GRDB read it.
    public init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .bytes(data)
        }
    }

    /// The value GRDB binds.
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .real(let number): number.databaseValue
        case .text(let text), .json(let text): text.databaseValue
        case .bytes(let data): data.databaseValue
        case .bool(let flag): (flag ? 1 : 0).databaseValue
        case .timestamp(let date): Timestamp.format(date).databaseValue
        case .uuid(let uuid): uuid.lowercasedText.databaseValue
        }
    }
}

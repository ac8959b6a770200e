import FerryCore
import Foundation

/// Converts ``SyncedRecord`` values to and from wire-form fields.
enum RecordCoding {
    static func fields<Record: SyncedRecord>(of record: Record, in collection: CollectionDefinition) throws -> [String: JSONValue] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: encoder.encode(record))
        } catch {
            throw StoreError(code: .typeMismatch, message: "Could not encode a \(Record.self) for '\(collection.name)': \(error).")
        }
        guard var fields = value.objectValue else {
            throw StoreError(code: .typeMismatch, message: "A \(Record.self) does not encode as an object of fields.")
        }
        fields.removeValue(forKey: "id")
        for field in collection.fields where fields[field.name] == nil {
            fields[field.name] = .null
        }
        return fields
    }

    static func decode<Record: SyncedRecord>(_ type: Record.Type, from record: LocalRecord) throws -> Record {
        var object = record.fields.filter { !$0.value.isNull }
        object["id"] = .string(record.id.lowercasedText)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 timestamp")
            }
            return date
        }
        do {
            return try decoder.decode(Record.self, from: Data(JSONValue.object(object).jsonText.utf8))
        } catch {
            throw StoreError(code: .typeMismatch, message: "Record \(record.id.lowercasedText) of '\(record.collection)' does not decode as \(Record.self): \(error).")
        }
    }
}

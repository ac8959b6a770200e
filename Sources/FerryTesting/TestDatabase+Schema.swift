import FerryServer
import Foundation

extension TestDatabase {
    /// Writes `text` (YAML or JSON) as the schema file in ``folder``, removed with the database; returns its path.
    public func writeSchema(_ text: String) throws -> String {
        let file = folder + "/schema.yaml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// ``serverConfiguration`` serving the schema `text`: the server of an end-to-end test that starts (or restarts)
    /// it itself rather than through `LiveServer.with`.
    public func endToEndConfiguration(schema text: String) throws -> ServerConfiguration {
        endToEndConfiguration(schemaFile: try writeSchema(text))
    }

    /// Like ``endToEndConfiguration(schema:)``, for a schema file already on disk (one of ``ExampleSchemas``).
    public func endToEndConfiguration(schemaFile path: String) -> ServerConfiguration {
        var configuration = serverConfiguration
        configuration.schemaFiles = [path]
        return configuration
    }
}

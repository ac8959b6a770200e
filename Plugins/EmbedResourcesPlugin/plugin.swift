import Foundation
import PackagePlugin

/// Compiles `docs/openapi.yaml` and the console's files (`Sources/FerryServer/Console/Assets`) into the server as
/// strings, so `GET /openapi.yaml` and `/console` serve them without a resource bundle an installed binary could lose.
@main
struct EmbedResourcesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let openAPI = context.package.directoryURL.appending(path: "docs/openapi.yaml")
        let assets = context.package.directoryURL.appending(path: "Sources/FerryServer/Console/Assets")
        let consoleFiles = try FileManager.default.contentsOfDirectory(atPath: assets.path())
            .filter { !$0.hasPrefix(".") }.sorted().map { assets.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources.swift")
        return [
            .buildCommand(
                displayName: "Embedding docs/openapi.yaml and the console",
                executable: try context.tool(named: "EmbedResources").url,
                arguments: [output.path()] + ([openAPI] + consoleFiles).map { $0.path() },
                inputFiles: [openAPI] + consoleFiles,
                outputFiles: [output]
            )
        ]
    }
}

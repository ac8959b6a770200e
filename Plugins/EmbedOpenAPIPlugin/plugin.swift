import Foundation
import PackagePlugin

/// Compiles `docs/openapi.yaml` into the server as a string, so `GET /openapi.yaml` serves the
/// document from the docs folder without a resource bundle that an installed binary could lose.
@main
struct EmbedOpenAPIPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "docs/openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocument.swift")
        return [
            .buildCommand(
                displayName: "Embedding docs/openapi.yaml",
                executable: try context.tool(named: "EmbedOpenAPI").url,
                arguments: [input.path(), output.path()],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

import Foundation
import PackagePlugin

/// Generates `BuildInfo.swift` for a target: the version (the `VERSION` file at the
/// package's root) and the commit it is built from (`git describe`, `unknown` outside a
/// git checkout), so that `--version` says exactly what runs.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        let root = context.package.directoryURL.path
        let script = """
            version=$(cat '\(root)/VERSION' 2>/dev/null || echo 0)
            commit=$(git -C '\(root)' describe --always --dirty --exclude '*' 2>/dev/null || echo unknown)
            text="/// The version and the commit this binary was built from.
            enum BuildInfo {
                static let version = \\"$version\\"
                static let commit = \\"$commit\\"
            }"
            [ "$(cat '\(output.path)' 2>/dev/null)" = "$text" ] || printf '%s\\n' "$text" > '\(output.path)'
            """
        return [
            .prebuildCommand(
                displayName: "Stamping \(target.name) with its version and commit",
                executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script],
                outputFilesDirectory: context.pluginWorkDirectoryURL)
        ]
    }
}

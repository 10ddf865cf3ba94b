public import Foundation
public import JSON

/// docs/api/openapi.yaml against what the API writes and serves, checked by
/// scripts/check-api-documents.py (JSON Schema and YAML in Python; Swift has neither here):
/// each sample (a schema's name and a document) must validate and use only the members its
/// schema names; the routes, when given, must be exactly the YAML's operations under /v1.
public enum APIContract {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The checker's exit status (0: no problem) and its report, one line a problem.
    public static func check(samples: [(String, JSONValue)], routes: [(method: String, template: String)]? = nil) throws -> (status: Int32, report: String) {
        var input: [String: JSONValue] = ["samples": .array(samples.map { ["schema": .string($0.0), "value": $0.1] })]
        if let routes { input["routes"] = .array(routes.map { [.string($0.method), .string($0.template)] }) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/check-api-documents.py").path,
                             root.appendingPathComponent("docs/api/openapi.yaml").path]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try ChildProcesses.run(process)
        stdin.fileHandleForWriting.write(JSONValue.object(input).data)
        try stdin.fileHandleForWriting.close()
        let report = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, report)
    }
}

import ArgumentParser
import CommandCore
import Foundation
import UnleashedApp

extension GlobalOptions {
    /// How long to scan for a module BlueZ does not know yet (--scan-timeout).
    func moduleScanTimeout() throws(ExitCode) -> Duration {
        try duration(scanTimeout, for: "--scan-timeout")
    }

    /// The adapter chosen by --adapter, else the remembered module's, else the first.
    var chosenAdapter: String? {
        ModuleOperations(adapter: adapter, module: module).chosenAdapter
    }

    /// Runs a module command as the options choose (adapter, module, daemon, backend); its
    /// failure becomes a message and an exit status.
    func onModules<Result>(_ body: (ModuleOperations) async throws(ModuleCommandError) -> Result) async throws(ExitCode) -> Result {
        let operations = ModuleOperations(adapter: adapter, module: module, scanTimeout: try moduleScanTimeout(), daemon: daemonClient(),
                                          backend: try chosenBackend(), demo: demoMode)
        do throws(ModuleCommandError) {
            return try await body(operations)
        } catch {
            throw fail(error.failure)
        }
    }

    /// Runs a module command and prints what it did.
    func report(_ body: (ModuleOperations) async throws(ModuleCommandError) -> some ModuleReport) async throws(ExitCode) {
        let report = try await onModules(body)
        emit(report.json) { report.text }
    }

    /// Answers pairing questions from --passkey and --yes, else on the terminal when there is one.
    func pairingAnswers(_ pairing: PairingOptions) -> PairingAnswers {
        PairingAnswers(passkey: pairing.passkey, confirm: pairing.yes, ask: isatty(STDIN_FILENO) == 1 && !json ? Self.ask : nil,
                   note: { Output.noteRaw($0) })
    }

    private static let ask: @Sendable (String) -> String = { question in
        Output.noteRaw(question)
        return readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
    }
}

import ArgumentParser
import BlueZ
import Foundation
import UnleashedApp
import UnleashedKit
import UnleashedProtocol

extension GlobalOptions {
    /// Refuses commands that need real Bluetooth in demo mode, where there is none to use.
    func requireBluetooth(_ command: String) throws(ExitCode) {
        if try chosenBackend() == .gphoto2 {
            throw usage("`unleashed \(command)` is for Unleashed modules; with --backend gphoto2, `unleashed cameras` "
                + "lists the cameras libgphoto2 finds")
        }
        guard !demoMode else {
            throw fail(code: "usage", "`unleashed \(command)` needs BlueZ; the --demo module is in-process and needs no Bluetooth. "
                + "To try it against a simulated bluetoothd, see docs/simulator-bluez.md", status: .usage)
        }
    }

    /// How long to scan for a module BlueZ does not know yet (--scan-timeout).
    func moduleScanTimeout() throws(ExitCode) -> Duration {
        try duration(scanTimeout, for: "--scan-timeout")
    }

    /// A BlueZ client on the system bus (`$DBUS_SYSTEM_BUS_ADDRESS` points it elsewhere).
    func openBlueZ() async throws(ExitCode) -> BlueZClient {
        do {
            return try await BlueZClient.open(bus: .system)
        } catch {
            throw fail(error)
        }
    }

    /// Runs `body` with a BlueZ client, the chosen adapter, and the device BlueZ knows by the
    /// address or name `wanted` (nil when it knows none), then closes the client; BlueZ errors
    /// become messages and exit statuses.
    func withKnownModule<Result>(
        _ wanted: String, _ body: (BlueZClient, BlueZAdapter, BlueZDevice?) async throws(BlueZError) -> Result
    ) async throws(ExitCode) -> Result {
        let client = try await openBlueZ()
        do throws(BlueZError) {
            let adapter = try await client.adapter(named: chosenAdapter)
            let device = await client.tree.devices(on: adapter.path).first { $0.matches(wanted) }
            let result = try await body(client, adapter, device)
            await client.close()
            return result
        } catch {
            await client.close()
            throw fail(error)
        }
    }

    /// The module named by --module, else the remembered one.
    func chosenModule() throws(ExitCode) -> String {
        if let chosen = module ?? RememberedModule.load()?.address { return chosen }
        throw fail(CameraChoiceError.noModule)
    }

    /// The adapter chosen by --adapter, else the remembered module's, else the first.
    var chosenAdapter: String? {
        adapter ?? (module == nil ? RememberedModule.load()?.adapter : nil)
    }

    /// Answers pairing questions: a passkey given with --passkey, a confirmation given with
    /// --yes, else a question on the terminal; without a terminal the pairing is refused with a
    /// message that says which option to pass.
    func pairingAgent(passkey: UInt32?, confirm: Bool) -> PairingAgent {
        let interactive = isatty(STDIN_FILENO) == 1 && !json
        return PairingAgent { request in
            switch request {
            case .confirm(let shown, _):
                if confirm || passkey == shown { return .accept }
                guard interactive else {
                    return .reject("the module asks to confirm passkey \(String(format: "%06u", shown)); check it and rerun with --yes")
                }
                let answer = Self.ask("Does the module show the passkey \(String(format: "%06u", shown))? [y/N] ")
                return answer.lowercased().hasPrefix("y") ? .accept : .reject("the passkey was not confirmed")
            case .passkey:
                if let passkey { return .passkey(passkey) }
                guard interactive, let typed = UInt32(Self.ask("Passkey shown by the module: ")) else {
                    return .reject("the module asks for the passkey it shows; rerun with --passkey NNNNNN")
                }
                return .passkey(typed)
            case .pinCode:
                return .reject("the module asked for a PIN code, which Unleashed modules do not use")
            case .display(let shown, _):
                Output.noteRaw("Enter passkey \(String(format: "%06u", shown)) on the module.\n")
                return .accept
            case .authorize:
                return .accept
            }
        }
    }

    private static func ask(_ question: String) -> String {
        Output.noteRaw(question)
        return readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
    }
}

extension Output {
    static func classify(_ error: BlueZError) -> (String, ExitStatus) {
        let failure = CameraFailure(error)
        return (failure.code, failure.status)
    }
}

// The parent that Tests/TestSupportTests/ChildProcessesTests.swift kills with SIGKILL: starts a
// simulated camera (`unleashed-sim ptpip`) through ChildProcesses from a thread that then ends,
// and a private dbus-daemon, prints their pids as one JSON line, and waits to be killed. Being
// killed runs none of its deinits, so only the way they were started can take its children down.

import Foundation
import Synchronization
import UnleashedTestSupport

/// The thread's id, from /proc/thread-self (a link to "PID/task/TID").
func currentThreadID() -> String {
    ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "").components(separatedBy: "/").last ?? ""
}

/// Starts the simulator on a thread of its own and returns once that thread has ended.
func startOnEndedThread() async throws -> SimulatorProcess {
    final class Started: Sendable {
        let value = Mutex<(result: Result<SimulatorProcess, any Error>, thread: String)?>(nil)
    }
    let started = Started()
    Thread.detachNewThread {
        let result = Result { try SimulatorProcess(["ptpip", "--port", "0"]) }
        // The thread ends only once the simulator runs: a child that had not yet asked for the
        // signal when its parent thread ended would not get it.
        if case .success(let simulator) = result {
            let listening = DispatchSemaphore(value: 0)
            Task {
                try? await simulator.waitForOutput("listening")
                listening.signal()
            }
            listening.wait()
        }
        started.value.withLock { $0 = (result, currentThreadID()) }
    }
    // A thread's end is seen in /proc only: polled.
    var ended: Result<SimulatorProcess, any Error>?
    _ = await eventually(every: .milliseconds(5)) {
        guard let (result, thread) = started.value.withLock({ $0 }),
              !FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)") else { return false }
        ended = result
        return true
    }
    guard let ended else { throw FixtureError("the starting thread did not end") }
    return try ended.get()
}

let simulator = try await startOnEndedThread()
try await simulator.waitForOutput("listening")
let bus = try await PrivateBus()
FileHandle.standardOutput.write(Data(#"{"bus": \#(bus.pid), "simulator": \#(simulator.pid)}"#.utf8 + [UInt8(ascii: "\n")]))
// Waits to be killed; the alarm's default action only ends a probe whose test went away.
alarm(120)
while true { pause() }

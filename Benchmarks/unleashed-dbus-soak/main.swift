// D-Bus soak: drives every path of the DBus target many times over, against a private
// dbus-daemon, so that a leak checker run over it (scripts/leak-check, under valgrind) sees each
// libdbus object and each Swift box made and freed thousands of times.
//
// A server connection owns a name and answers calls: echoes rich bodies (a{sv}, a few hundred
// bytes of ay, nested variants, object paths), answers some with errors, drops some unanswered
// (the layer then answers them with an error) and holds some until the caller has timed out. It
// also emits signals, which the client receives through a match rule. Four client tasks make the
// calls, plain and batched; alongside them, short-lived connections open, leave calls pending and
// close. At the end everything is closed, the bus is killed under the server, and the soak waits
// for every connection's loop thread to end before it prints its counts.
//
// Usage: unleashed-dbus-soak [--calls N] [--connections N]
// Exits 0 when every call ended as expected, 1 otherwise.

import DBus
import Foundation
import Synchronization
import UnleashedTestSupport

let arguments = CommandLine.arguments
func option(_ name: String) -> Int? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } }
let totalCalls = option("--calls") ?? 10_000
let extraConnections = option("--connections") ?? 100
guard totalCalls >= 1, extraConnections >= 0 else {
    FileHandle.standardError.write(Data("usage: unleashed-dbus-soak [--calls N (1 or more)] [--connections N]\n".utf8))
    exit(64)
}

let serviceName = "org.unleashed.Soak"
let objectPath = "/org/unleashed/Soak"
let interface = "org.unleashed.Soak"
let refusedName = "org.unleashed.Soak.Error.Refused"

/// What happened, counted from every task.
final class Counts: Sendable {
    enum Kind: Hashable { case ok, errors, timeouts, closed, signalsSent, signalsReceived, connections, unexpected }
    private let values = Mutex<[Kind: Int]>([:])

    func add(_ kind: Kind) { values.withLock { $0[kind, default: 0] += 1 } }

    subscript(kind: Kind) -> Int { values.withLock { $0[kind, default: 0] } }

    func fail(_ what: String) {
        add(.unexpected)
        FileHandle.standardError.write(Data("unleashed-dbus-soak: unexpected: \(what)\n".utf8))
    }
}

/// A dbus-daemon of our own, configured as the tests' (Tests/Support/PrivateBus.swift). Spawned
/// with posix_spawn rather than Foundation's Process, which fails under valgrind: it closes every
/// descriptor it finds in /proc/self/fd, valgrind's own included, and gets EBADF. Tied to this
/// process like every child of a test (ChildProcesses), so that a soak killed midway leaves no bus.
struct PrivateDaemon {
    let address: String
    let pid: pid_t
    let directory: URL

    static func start() throws(DBusError) -> PrivateDaemon {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unleashed-soak-\(UUID().uuidString)")
        let config = directory.appendingPathComponent("bus.conf")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>unix:path=\(directory.appendingPathComponent("bus.sock").path)</listen>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    <allow user="*"/>
                    <allow own="*"/>
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                  </policy>
                </busconfig>
                """.write(to: config, atomically: true, encoding: .utf8)
        } catch {
            throw DBusError(name: DBusError.failedName, message: "could not write the bus configuration: \(error)")
        }
        var output: [Int32] = [0, 0]
        guard pipe(&output) == 0 else { throw DBusError(name: DBusError.failedName, message: "pipe failed") }
        let (reading, writing) = (output[0], output[1])
        let spawned: pid_t?
        do {
            spawned = try ChildProcesses.spawn("/usr/bin/dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"]) { command in
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_adddup2(&actions, writing, 1)
                posix_spawn_file_actions_addclose(&actions, reading)
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
                var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
                defer { for argument in argv { free(argument) } }
                var pid: pid_t = 0
                return posix_spawn(&pid, command[0], &actions, nil, &argv, environ) == 0 ? pid : nil
            }
        } catch {
            close(reading)
            close(writing)
            throw DBusError(name: DBusError.failedName, message: "\(error)")
        }
        close(writing)
        defer { close(reading) }
        guard let pid = spawned else {
            throw DBusError(name: DBusError.failedName, message: "could not start /usr/bin/dbus-daemon (scripts/setup installs it)")
        }
        // The daemon keeps stdout open: read up to the end of the address line, not to EOF.
        var printed: [UInt8] = []
        var byte: UInt8 = 0
        while read(reading, &byte, 1) == 1, byte != UInt8(ascii: "\n") { printed.append(byte) }
        let daemon = PrivateDaemon(address: String(decoding: printed, as: UTF8.self), pid: pid, directory: directory)
        guard daemon.address.hasPrefix("unix:") else {
            daemon.stop()
            throw DBusError(name: DBusError.failedName, message: "dbus-daemon did not start")
        }
        return daemon
    }

    /// SIGKILL: the daemon ignores SIGTERM.
    func kill() { _ = Glibc.kill(pid, SIGKILL) }

    func stop() {
        kill()
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The calls the server has received and not answered, by the token each carries.
final class Held: Sendable {
    private let calls = Mutex<[String: DBusIncomingCall]>([:])

    func hold(_ call: DBusIncomingCall) {
        let token = call.message.body.first?.stringValue ?? ""
        calls.withLock { $0[token] = call }
    }

    func has(_ token: String) -> Bool { calls.withLock { $0[token] != nil } }

    /// Lets the calls go; the layer answers each with an error, to a caller that gave up.
    func release(_ tokens: [String]) {
        // Released here, outside the lock.
        _ = calls.withLock { calls in tokens.compactMap { calls.removeValue(forKey: $0) } }
    }

    var count: Int { calls.withLock { $0.count } }
}

/// A body with every shape BlueZ sends: a{sv} with nested variants, a few hundred bytes, object paths.
func body(_ index: Int) -> [DBusValue] {
    [
        .string("echo \(index)"),
        .properties([
            "Index": .uint32(UInt32(index)),
            "Name": .string("call \(index)"),
            "Nested": .variant(.properties(["Path": .objectPath("/org/unleashed/soak/dev_\(index % 7)"), "On": .bool(index % 2 == 0)])),
            "RSSI": .int16(Int16(-(index % 90))),
        ]),
        .bytes((0..<300).map { UInt8(truncatingIfNeeded: $0 &+ index) }),
        .objectPath("/org/unleashed/soak/item\(index)"),
        .variant(.structure([.string("x"), .int64(Int64(index)), .variant(.bytes([1, 2, 3]))])),
        .objectPaths(["/a", "/b/c\(index % 3)"]),
    ]
}

func expectOK(_ result: Result<[DBusValue], DBusError>, _ sent: [DBusValue], _ counts: Counts) {
    switch result {
    case .success(let reply) where reply == sent: counts.add(.ok)
    case .success(let reply): counts.fail("echo came back different: \(reply.first?.description ?? "empty")")
    case .failure(let error): counts.fail("echo failed: \(error)")
    }
}

func expectError(_ result: Result<[DBusValue], DBusError>, _ name: String, _ message: String, _ counts: Counts) {
    switch result {
    case .failure(let error) where error.name == name && error.message == message: counts.add(.errors)
    case .failure(let error): counts.fail("expected \(name): \(message), got \(error)")
    case .success: counts.fail("expected \(name), got a reply")
    }
}

func outcome(_ work: () async throws(DBusError) -> [DBusValue]) async -> Result<[DBusValue], DBusError> {
    do throws(DBusError) { return .success(try await work()) } catch { return .failure(error) }
}

/// One client task's share of the calls. Every tenth step the server emits a signal.
func clientWork(worker: Int, quota: Int, client: DBusConnection, server: DBusConnection, held: Held, counts: Counts) async {
    var done = 0
    var step = 0
    while done < quota {
        let index = worker * 1_000_000 + step
        func call(_ member: String, _ sent: [DBusValue], timeout: Duration = .seconds(60)) async -> Result<[DBusValue], DBusError> {
            await outcome { () async throws(DBusError) in
                try await client.call(serviceName, path: objectPath, interface: interface, member: member, sent, timeout: timeout)
            }
        }
        switch step % 20 {
        case 0 where quota - done >= 5:
            // A batch: four echoes and a refusal, sent back to back.
            let sent = (0..<5).map { body(index * 10 + $0) }
            let batch = sent.enumerated().map { DBusConnection.Call(path: objectPath, interface: interface, member: $0 == 2 ? "Refuse" : "Echo", $1) }
            let results = await client.callAll(serviceName, batch, timeout: .seconds(60))
            for (offset, result) in results.enumerated() {
                if offset == 2 {
                    expectError(result, refusedName, "refused \(sent[2][0].stringValue ?? "")", counts)
                } else {
                    expectOK(result, sent[offset], counts)
                }
            }
            done += 5
        case 1, 2:
            let sent = body(index)
            expectError(await call("Refuse", sent), refusedName, "refused echo \(index)", counts)
            done += 1
        case 3:
            // The server drops the call: the layer answers it with an error when it is released.
            expectError(await call("Drop", body(index)), DBusError.failedName, "Drop was not answered", counts)
            done += 1
        case 5 where worker == 0 && step % 500 == 5:
            // Held by the server past a short timeout: NoReply, then the server lets it go.
            let sent = body(index)
            let result = await call("Hold", sent, timeout: .milliseconds(50))
            if case .failure(let error) = result, error.name == DBusError.noReplyName {
                counts.add(.timeouts)
            } else {
                counts.fail("expected NoReply, got \(result)")
            }
            // Released once the server holds it: under valgrind the call may reach the server
            // after its 50 ms, and one released before it arrived would be held for good.
            let token = sent[0].stringValue ?? ""
            while !held.has(token) { try? await Task.sleep(for: .milliseconds(2)) }
            held.release([token])
            done += 1
        default:
            let sent = body(index)
            expectOK(await call("Echo", sent), sent, counts)
            done += 1
        }
        if step % 10 == 0 {
            counts.add(.signalsSent)
            server.emit(path: objectPath, interface: interface, member: "Tick", [.uint32(UInt32(step)), .properties(["Worker": .int32(Int32(worker))])])
        }
        step += 1
    }
}

/// Connections that live for a few calls: each leaves calls pending (received by the server,
/// never answered) when it closes, and one more call racing the close.
func shortLivedConnections(_ count: Int, address: String, held: Held, counts: Counts) async throws(DBusError) {
    for round in 0..<count {
        let connection = try await DBusConnection.open(.address(address))
        counts.add(.connections)
        let stream = connection.signals()
        let listener = Task { for await _ in stream {} }
        let tokens = (0..<3).map { "extra \(round) \($0)" }
        let pending = tokens.map { token in
            Task {
                await outcome { () async throws(DBusError) in
                    try await connection.call(serviceName, path: objectPath, interface: interface, member: "Hold", [.string(token)],
                                              timeout: .seconds(120))
                }
            }
        }
        while !tokens.allSatisfy(held.has) { try? await Task.sleep(for: .milliseconds(2)) }
        let racing = Task {
            await outcome { () async throws(DBusError) in
                try await connection.call(serviceName, path: objectPath, interface: interface, member: "Echo", [.string("race")])
            }
        }
        connection.close()
        for task in pending {
            // libdbus completes calls pending at close with a local error.
            switch await task.value {
            case .failure(let error) where [DBusError.noReplyName, DBusError.disconnectedName].contains(error.name):
                counts.add(.closed)
            case let other: counts.fail("a call pending at close ended with \(other)")
            }
        }
        switch await racing.value {
        case .success([.string("race")]): counts.add(.ok)
        case .failure(let error) where [DBusError.noReplyName, DBusError.disconnectedName].contains(error.name):
            counts.add(.closed)
        case let other: counts.fail("a call racing the close ended with \(other)")
        }
        await listener.value
        held.release(tokens)
    }
}

/// How many of this process's threads are connection loops (named "dbus-loop").
func loopThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "").hasPrefix("dbus-loop")
    }.count
}

/// How many sockets and eventfds this process has open: a connection holds one of each. (The
/// runtime opens other descriptors, timerfds, when it first needs them.)
func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).filter { fd in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? ""
        return target.hasPrefix("socket:") || target == "anon_inode:[eventfd]"
    }.count
}

func wait(upTo limit: Duration, for condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

func soak(daemon: PrivateDaemon, calls totalCalls: Int, connections: Int, counts: Counts) async throws(DBusError) {
    let held = Held()
    let server = try await DBusConnection.open(.address(daemon.address))
    server.handleMethodCalls { call in
        switch call.message.member {
        case "Echo": call.reply(call.message.body)
        case "Refuse": call.fail(refusedName, "refused \(call.message.body.first?.stringValue ?? "")")
        case "Hold": held.hold(call)
        case "Drop": break
        default: call.fail(DBusError.unknownMethodName, "no method \(call.message.member ?? "")")
        }
    }
    guard try await server.requestName(serviceName) else { throw DBusError(name: DBusError.failedName, message: "could not own \(serviceName)") }

    let client = try await DBusConnection.open(.address(daemon.address))
    let signals = client.signals()
    let listener = Task {
        for await message in signals where message.isSignal(interface, "Tick") {
            if message.sender == server.uniqueName, message.body.first?.intValue != nil {
                counts.add(.signalsReceived)
            } else {
                counts.fail("a Tick signal from \(message.sender ?? "nobody") with \(message.body)")
            }
        }
    }
    try await client.addMatch("type='signal',interface='\(interface)',member='Tick'")
    // The final wait for the loop threads to end knows them by name: check that it can see them.
    if loopThreads() < 2 { counts.fail("the connections' loop threads are not named \"dbus-loop\"") }

    let address = daemon.address
    let extra = Task { () async -> DBusError? in
        do throws(DBusError) {
            try await shortLivedConnections(connections, address: address, held: held, counts: counts)
            return nil
        } catch {
            return error
        }
    }
    await withTaskGroup(of: Void.self) { group in
        let workers = 4
        for worker in 0..<workers {
            let quota = totalCalls / workers + (worker == 0 ? totalCalls % workers : 0)
            group.addTask { await clientWork(worker: worker, quota: quota, client: client, server: server, held: held, counts: counts) }
        }
    }
    if let error = await extra.value { throw error }

    if !(await wait(upTo: .seconds(120)) { counts[.signalsReceived] >= counts[.signalsSent] }) {
        counts.fail("\(counts[.signalsReceived]) of \(counts[.signalsSent]) signals arrived")
    }
    if held.count != 0 { counts.fail("\(held.count) calls still held") }

    client.close()
    await listener.value
    // The server is not closed: the bus goes away under it.
    daemon.kill()
    if !(await wait(upTo: .seconds(60)) { !server.isConnected }) { counts.fail("the server did not notice the bus going away") }
    server.close()
}

/// Runs the whole soak and prints what happened.
func run(calls totalCalls: Int, connections: Int, counts: Counts) async {
    let daemon: PrivateDaemon
    do throws(DBusError) {
        daemon = try PrivateDaemon.start()
    } catch {
        return counts.fail("\(error)")
    }
    let descriptors = openDescriptors()
    let start = ContinuousClock.now
    do throws(DBusError) {
        try await soak(daemon: daemon, calls: totalCalls, connections: connections, counts: counts)
    } catch {
        counts.fail("\(error)")
    }
    // Every connection is released: wait for their loop threads to end, so that nothing of theirs
    // is still reachable from a live thread when the leak checker looks.
    if !(await wait(upTo: .seconds(60)) { loopThreads() == 0 }) { counts.fail("\(loopThreads()) loop threads still running") }
    let elapsed = ContinuousClock.now - start
    if openDescriptors() > descriptors { counts.fail("\(openDescriptors() - descriptors) file descriptors left open") }
    daemon.stop()

    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let calls = counts[.ok] + counts[.errors] + counts[.timeouts] + counts[.closed]
    print("""
        unleashed-dbus-soak: \(calls) calls in \(String(format: "%.1f", seconds)) s
          ok                 \(counts[.ok])
          error replies      \(counts[.errors])
          timeouts (NoReply) \(counts[.timeouts])
          ended by close     \(counts[.closed])
          signals            \(counts[.signalsReceived]) of \(counts[.signalsSent])
          extra connections  \(counts[.connections])
          unexpected         \(counts[.unexpected])
        """)
}

// The main thread waits on a semaphore rather than being an async main: an async main parks the
// main thread in dispatch's sigsuspend, with its mask in read-only memory, and valgrind 3.19
// crashes on that call.
let counts = Counts()
let finished = DispatchSemaphore(value: 0)
Task.detached {
    await run(calls: totalCalls, connections: extraConnections, counts: counts)
    finished.signal()
}
finished.wait()
exit(counts[.unexpected] == 0 ? 0 : 1)

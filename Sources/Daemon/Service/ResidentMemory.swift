import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the daemon does about its own memory, which it holds for weeks on a small computer.
///
/// Most of what an idle daemon has resident is not its data but code: pages of its executable
/// and of Swift's libraries, mapped by the kernel as start-up touches them, 64 KiB around each
/// page it needs. Start-up (the dynamic loader's relocations, the runtime's first type lookups,
/// the argument parser, reading the configuration) runs code the daemon never runs again, and
/// those pages stay mapped, and counted, for the life of the process.
enum ResidentMemory {
    /// Caps glibc's malloc at two arenas. It gives a thread that finds the heap busy an arena of
    /// its own, up to eight per core, and memory freed in one arena is reused only by the
    /// threads that allocate from it; the daemon's threads (Swift's pool, the event loop,
    /// D-Bus, each run's own thread, the journal's writer) are idle most of the time, so more
    /// arenas only hold more free memory apart. Called as the daemon starts, before most of
    /// those threads exist.
    static func limitArenas() {
        #if canImport(Glibc)
        // <malloc.h> is not part of Swift's Glibc module: the two calls are looked up by name.
        let mArenaMax: Int32 = -8
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)(mArenaMax, 2)
        #endif
    }

    /// Returns the free memory of every malloc arena to the system (`malloc_trim(0)`).
    private static func trimHeap() {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        #endif
    }

    /// Lets go of the start-up pages once the daemon serves: drops from its page tables every read-only file-backed
    /// mapping that has no private copy of a page in it (code, read-only data), and returns the
    /// heap's free memory to the system. Code the daemon runs afterwards is mapped again from the
    /// page cache (a minor fault, no disk read, while the file stays cached), so what stays
    /// resident is what it runs. Writable mappings and any holding an anonymous page (data the
    /// loader relocated, made read-only afterwards) are left alone: dropping those would lose
    /// their contents. Returns the resident KiB before and after.
    @discardableResult
    static func releaseStartupPages() -> (beforeKiB: Int, afterKiB: Int) {
        #if os(Linux)
        let before = residentKiB()
        for mapping in releasableMappings() {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.length, MADV_DONTNEED)
        }
        trimHeap()
        return (before, residentKiB())
        #else
        return (0, 0)
        #endif
    }

    /// The mappings `releaseStartupPages` may let go of, from `/proc/self/smaps`.
    static func releasableMappings(smaps: String? = readToEnd("/proc/self/smaps")) -> [(start: UInt, length: Int)] {
        var found: [(start: UInt, length: Int)] = []
        var current: (start: UInt, length: Int, candidate: Bool)?
        for line in (smaps ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), !first.hasSuffix(":"), fields.count >= 5 {
                let bounds = first.split(separator: "-")
                guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16) else {
                    current = nil
                    continue
                }
                let permissions = fields[1]
                let path = fields.count >= 6 ? fields[5] : ""
                current = (start, Int(end - start), permissions.hasPrefix("r") && !permissions.contains("w") && path.hasPrefix("/"))
            } else if first == "Anonymous:", let mapping = current {
                if mapping.candidate, fields.count >= 2, fields[1] == "0" { found.append((mapping.start, mapping.length)) }
                current = nil
            }
        }
        return found
    }

    /// A file of /proc whole: they report a size of 0, and a read of what the size says gets
    /// only the first part.
    private static func readToEnd(_ path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path), let data = try? file.readToEnd() else { return nil }
        try? file.close()
        return String(decoding: data, as: UTF8.self)
    }

    /// This process's resident memory, KiB.
    static func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split { $0 == " " || $0 == "\t" }.dropFirst().first ?? "") } ?? 0
    }
}

@testable import Daemon
import Testing

/// Which mappings the daemon lets go of after start-up: unmapping a page that holds the only
/// copy of its contents (a writable mapping, data the loader relocated) would corrupt the
/// process, so only read-only file mappings without an anonymous page may be chosen.
@Suite("the start-up pages the daemon lets go of")
struct ResidentMemoryTests {
    static let smaps = """
        5600aa000000-5600aa200000 r-xp 00000000 fe:00 1234    /usr/bin/unleashed
        Size:               2048 kB
        Rss:                1024 kB
        Anonymous:             0 kB
        VmFlags: rd ex mr mw me dw
        5600aa200000-5600aa210000 r--p 00200000 fe:00 1234    /usr/bin/unleashed
        Size:                 64 kB
        Rss:                  64 kB
        Anonymous:            64 kB
        VmFlags: rd mr mw me dw ac
        5600aa210000-5600aa220000 rw-p 00210000 fe:00 1234    /usr/bin/unleashed
        Size:                 64 kB
        Anonymous:             0 kB
        5600ab000000-5600ab100000 rw-p 00000000 00:00 0       [heap]
        Size:               1024 kB
        Anonymous:           512 kB
        7f0000000000-7f0000010000 r--p 00000000 fe:00 99      /usr/lib/x86_64-linux-gnu/libc.so.6
        Size:                 64 kB
        Anonymous:             0 kB
        7f0000100000-7f0000101000 r-xp 00000000 00:00 0       [vdso]
        Size:                  4 kB
        Anonymous:             0 kB
        7f0000200000-7f0000300000 rw-p 00000000 00:00 0
        Size:               1024 kB
        Anonymous:            16 kB
        """

    @Test("only read-only file mappings with no anonymous page are chosen, each whole")
    func choosesReadOnlyFileMappings() {
        let chosen = ResidentMemory.releasableMappings(smaps: Self.smaps)
        #expect(chosen.map(\.start) == [0x5600_aa00_0000, 0x7f00_0000_0000])
        #expect(chosen.map(\.length) == [0x20_0000, 0x1_0000])
    }

    @Test("this process's own mappings: some are chosen, and none is writable")
    func ownMappings() {
        let chosen = ResidentMemory.releasableMappings()
        #expect(!chosen.isEmpty, "the test process's code is mapped from files")
        #expect(chosen.allSatisfy { $0.length > 0 && $0.start % 4096 == 0 })
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// How far the tests' safety-net deadlines stretch: the time limits of the suites that set one,
/// `yieldUntil`'s and the test origin's waits, the proxy tests' HTTP request deadlines and the
/// timeouts a test gives a server it starts. None of them is a timing assertion; each only ends
/// a test that would otherwise hang.
///
/// `Sanitizers.slowdown` times a load factor, 3 unless `WEBIMAGE_DEADLINE_STRETCH` says
/// otherwise. Swift Testing starts every test of a process at once on a two-thread cooperative
/// pool, so a test's wall time is mostly its wait for the others: on a quiet two-core machine
/// tests under a 1-minute limit took 63–65 s from their start (the limit's clock starts later,
/// when the body runs) and requests under a 60 s deadline came close to it. CI's run of
/// 2026-11-28 (1,684 s where a quiet clone takes 1,100) failed there, and the same suite beside
/// two busy loops (half the machine) recorded 120 issues, every one a limit or a deadline run
/// out with nothing wrong. Three times the room costs nothing when the tests pass.
public enum Deadlines {
    public static let stretch: Int = Sanitizers.slowdown * loadFactor

    private static let loadFactor: Int = {
        guard let text = getenv("WEBIMAGE_DEADLINE_STRETCH").map({ String(cString: $0) }),
              let value = Int(text), value >= 1 else { return 3 }
        return value
    }()
}

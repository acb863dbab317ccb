import Testing
@testable import WebImageServer

/// When the proxy returns free memory: once after a burst of renders has ended, again when
/// expired decoded images were dropped while idle, never while renders go on.
@Suite struct MemoryReclaimTests {
    @Test func returnsMemoryOnceTheRendersStop() {
        var reclaim = MemoryReclaim()
        var trims: [Bool] = []
        trims.append(reclaim.tick(released: false))  // nothing rendered yet
        reclaim.rendered()
        reclaim.rendered()
        trims.append(reclaim.tick(released: true))  // renders went on in this interval
        reclaim.rendered()
        trims.append(reclaim.tick(released: false))
        trims.append(reclaim.tick(released: false))  // the first idle interval
        trims.append(reclaim.tick(released: false))  // once only
        trims.append(reclaim.tick(released: true))  // expired images dropped while idle
        trims.append(reclaim.tick(released: false))
        #expect(trims == [false, false, false, true, false, true, false])
    }
}

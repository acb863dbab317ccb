import Foundation
import Testing
import WebImageCore
@testable import WebImageCodecs

/// Animations cut short keep the frames that arrived whole, and say they are not complete.
@Suite struct PartialImageTests {
    static let demo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Demo/images")

    @Test(arguments: ["chi-animated.gif", "apng-delay.png"])
    func anAnimationCutShortIsIncomplete(name: String) throws {
        let data = try Data(contentsOf: Self.demo.appendingPathComponent(name))
        let registry = CoderRegistry.system()
        let whole = try registry.decode(data)
        #expect(whole.isComplete)
        let cut = try registry.decode(data.prefix(data.count * 7 / 10))
        #expect(!cut.isComplete)
        #expect(cut.animation?.frames.count ?? 1 < whole.animation?.frames.count ?? 1)
    }
}

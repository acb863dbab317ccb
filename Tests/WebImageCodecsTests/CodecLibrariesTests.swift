import Testing
@testable import WebImageCodecs

@Test func everyCodecLibraryIsLinkedAndReportsAVersion() {
    let versions = CodecLibraries.versions
    #expect(versions.count == 8)
    for (library, version) in versions {
        #expect(version.first?.isNumber == true || library == "TurboJPEG", "\(library): \(version)")
    }
}

import Foundation

/// Text that a C library wrote into an error (libheif's messages, libavif's diagnostics), made
/// into one line: libheif puts a line break inside some of its messages, and our errors end up
/// as one line of a log, of `webimage`'s standard error, or of a proxy's error body.
enum LibraryMessage {
    /// `text` with every run of line breaks and the spaces around it made one space, trimmed.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

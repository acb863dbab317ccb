import Foundation

/// The command line of `webimage-gtk`. Parsed by hand: ArgumentParser would be one more
/// dependency for a handful of flags, and its async entry point does not run on the main
/// thread that GTK needs.
struct GalleryOptions {
    /// A folder, a text file of URLs, or the address of a running `webimage serve`.
    var source = ""
    /// The side of a thumbnail cell, in pixels.
    var cellSize = 160
    var windowWidth = 960
    var windowHeight = 640
    /// The memory cache's limit for decoded thumbnails, in bytes.
    var memoryLimit = 64 << 20
    var usesDiskCache = true
    /// Where `--screenshot` writes the window, as PNG.
    var screenshot: String?
    /// Print the items and exit, without opening a window.
    var listsOnly = false
    /// The test and benchmark mode: commands on standard input (GalleryAutomation.swift).
    var automation = false

    static let usage = """
        usage: webimage-gtk [options] FOLDER | URL-LIST-FILE | http://HOST:PORT/

          FOLDER              the images directly in a folder
          URL-LIST-FILE       a text file of image URLs (or paths), one a line; # starts a comment
          http://HOST:PORT/   a running `webimage serve --origin-dir DIR`: its gallery's images,
                              as thumbnails the proxy renders

        options:
          --cell N            thumbnail cell size in pixels (default 160)
          --size WxH          window size (default 960x640)
          --memory-limit MB   memory cache limit for decoded thumbnails (default 64)
          --no-disk-cache     keep nothing on disk (default: ~/.cache/webimage-gtk)
          --screenshot FILE   wait until the visible thumbnails have loaded, write the window as
                              PNG to FILE and exit
          --list              print the items (name, thumbnail URL, image URL, and the
                              ThumbHash a proxy's page gives) and exit
        """

    /// Parses `arguments` (without the program's name); a message for the user when they are wrong.
    static func parse(_ arguments: [String]) -> Result<GalleryOptions, UsageError> {
        var options = GalleryOptions()
        var remaining = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let value = remaining.popFirst() else { throw UsageError("\(flag) needs a value") }
            return value
        }
        do throws(UsageError) {
            while let argument = remaining.popFirst() {
                switch argument {
                case "--cell": options.cellSize = try positive(value(argument), argument)
                case "--size": (options.windowWidth, options.windowHeight) = try size(value(argument))
                case "--memory-limit": options.memoryLimit = try positive(value(argument), argument) << 20
                case "--no-disk-cache": options.usesDiskCache = false
                case "--screenshot": options.screenshot = try value(argument)
                case "--list": options.listsOnly = true
                case "--automation": options.automation = true
                case "-h", "--help": throw UsageError(nil)
                default:
                    guard !argument.hasPrefix("--"), options.source.isEmpty else { throw UsageError("unexpected argument \(argument)") }
                    options.source = argument
                }
            }
            guard !options.source.isEmpty else { throw UsageError("what to open is missing") }
            return .success(options)
        } catch {
            return .failure(error)
        }
    }

    private static func positive(_ text: String, _ flag: String) throws(UsageError) -> Int {
        guard let number = Int(text), number > 0 else { throw UsageError("\(flag) takes a positive number, not \(text)") }
        return number
    }

    private static func size(_ text: String) throws(UsageError) -> (Int, Int) {
        let parts = text.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 > 0 }) else { throw UsageError("--size takes WIDTHxHEIGHT, not \(text)") }
        return (parts[0], parts[1])
    }
}

/// A wrong command line: the message (none for `--help`) goes before the usage.
struct UsageError: Error {
    var message: String?
    init(_ message: String?) { self.message = message }
}

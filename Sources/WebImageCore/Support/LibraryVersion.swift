/// The version of this package, for the default `User-Agent` headers and `webimage --version`.
/// A release sets it to the version it tags; between releases it names the next minor version
/// with `-dev` (see CHANGELOG.md).
package enum LibraryVersion {
    package static let string = "1.1.0-dev"
}

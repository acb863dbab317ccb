import Foundation

/// Whether a test that needs a server or tool from outside the package (SeaweedFS, rclone,
/// thumbor, nginx, Xvfb, ab, openssl, colord's profiles) may run: when it is installed, and
/// always under `CI=true`. `make test` installs all of them, so in CI a missing one must fail
/// the test that needs it rather than skip it; on a developer's machine the test is skipped,
/// with its trait's reason, and the summary of `make test` counts it as skipped.
///
/// ```swift
/// @Suite(.enabled(if: Requirement.met(Nginx.executable != nil), "nginx is not installed"))
/// ```
public enum Requirement {
    public static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    public static func met(_ installed: Bool) -> Bool { installed || isCI }
}

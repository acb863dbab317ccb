import Foundation

/// A pipe whose ends close when any process execs: what the tests hand a child as its standard
/// input and output, instead of Foundation's `Pipe`.
///
/// `SpawnedProcess` closes every other descriptor in the child just before it execs, but a
/// process started by other means (a library's, a shell's child of a child) closes nothing: a
/// long-lived one then holds the write end of a pipe that is not its own, and the process that
/// owns it never sees end of file (on 2026-11-25, when Foundation's `Process` still started the
/// tests' children and closed only the descriptors open when it looked,
/// `ServeCommandTests.s3FlagsAreChecked` waited for ever so). A close-on-exec descriptor is never
/// inherited across `exec`; the child still gets its own standard streams, which `dup2` makes
/// without the flag.
public struct CloseOnExecPipe: Sendable {
    public let reading: FileHandle
    public let writing: FileHandle

    public init() throws {
        var descriptors: [Int32] = [-1, -1]
        guard systemPipe2(&descriptors, O_CLOEXEC) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        reading = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
        writing = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
    }
}

/// glibc's `pipe2`, which its Swift module leaves out (it is declared under `_GNU_SOURCE`): it
/// makes both descriptors close-on-exec atomically, with no moment in which another thread's
/// spawn could inherit them.
@_silgen_name("pipe2")
private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
